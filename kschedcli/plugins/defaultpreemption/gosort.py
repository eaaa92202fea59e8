"""Go's sort.Slice, step for step, so that ties come out in kube-scheduler's order.

sort.Slice is not stable: for more than 12 elements it runs pattern-defeating quicksort, and equal
elements (victims with the same priority and start time) end up in an order that only this exact
algorithm reproduces. Preemption sorts its potential victims with it, and the order decides which
victims get reprieved, so a stable Python sort would pick different victims on large nodes.

`go_sort_slice(items, less)` sorts the list in place with `less(a, b)` (a strict "a before b").
The comparison need not be consistent: the sequence of comparisons and swaps is Go's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_MASK64 = (1 << 64) - 1
_INCREASING, _DECREASING, _UNKNOWN = 1, 2, 0


def go_sort_slice(items: list[T], less: Callable[[T, T], bool]) -> None:
    n = len(items)
    _Sorter(items, less).pdqsort(0, n, n.bit_length())


class _Sorter:
    __slots__ = ("v", "less_items")

    def __init__(self, v: list, less: Callable):
        self.v = v
        self.less_items = less

    def less(self, i: int, j: int) -> bool:
        return self.less_items(self.v[i], self.v[j])

    def swap(self, i: int, j: int) -> None:
        v = self.v
        v[i], v[j] = v[j], v[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, lo, hi = a, 0, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(lo, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        max_insertion = 12
        was_balanced = True
        was_partitioned = True
        while True:
            length = b - a
            if length <= max_insertion:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if was_balanced and was_partitioned and hint == _INCREASING and self.partial_insertion_sort(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, already = self.partition(a, b, pivot)
            was_partitioned = already
            left_len, right_len = mid - a, b - mid
            balance_threshold = length // 8
            if left_len < right_len:
                was_balanced = left_len >= balance_threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right_len >= balance_threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        return i

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        max_steps, shortest_shifting = 5, 50
        i = a + 1
        for _ in range(max_steps):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < shortest_shifting:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                j = i - 1
                while j >= 1:
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
                    j -= 1
            if b - i >= 2:
                j = i + 1
                while j < b:
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
                    j += 1
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length >= 8:
            r = length & _MASK64
            modulus = 1 << length.bit_length()
            idx = a + (length // 4) * 2 - 1
            while idx <= a + (length // 4) * 2 + 1:
                # xorshift with Go 1.22+'s 64-bit shift constants
                r ^= (r << 13) & _MASK64
                r ^= r >> 7
                r ^= (r << 17) & _MASK64
                other = r & (modulus - 1)
                if other >= length:
                    other -= length
                self.swap(idx, a + other)
                idx += 1

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        shortest_ninther, max_swaps = 50, 4 * 3
        n = b - a
        swaps = [0]
        i = a + n // 4 * 1
        j = a + n // 4 * 2
        k = a + n // 4 * 3
        if n >= 8:
            if n >= shortest_ninther:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == max_swaps:
            return j, _DECREASING
        return j, _UNKNOWN

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1
