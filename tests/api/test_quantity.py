import pytest

from kschedcli.api import quantity
from kschedcli.errors import FieldError


@pytest.mark.parametrize(
    "text,milli,value",
    [
        ("500m", 500, 1),
        ("1.5", 1500, 2),
        ("2", 2000, 2),
        ("0.1", 100, 1),
        (".5", 500, 1),
        ("8G", 8 * 10**12, 8 * 10**9),
        ("7812500Ki", 8 * 10**12, 8 * 10**9),
        ("8e9", 8 * 10**12, 8 * 10**9),
        ("1e3", 10**6, 1000),
        ("7.5Gi", 8053063680000, 8053063680),
        ("1Mi", 1048576000, 1048576),
        ("1n", 1, 1),
        ("1u", 1, 1),
        ("100k", 10**8, 10**5),
        ("1E", 10**21, 10**18),
        ("1.5Ki", 1536000, 1536),
        ("+3", 3000, 3),
        ("1E-3", 1, 1),
    ],
)
def test_parse_like_resource_quantity(text, milli, value):
    n = quantity.parse(text)
    assert quantity.milli_value(n) == milli
    assert quantity.value(n) == value


def test_milli_value_rounds_up():
    # 0.0001 cpu is 100 micro-cores: MilliValue rounds up to 1m, as apimachinery does
    assert quantity.milli_value(quantity.parse("0.0001")) == 1
    assert quantity.milli_value(quantity.parse("1500u")) == 2


def test_integers_and_floats_from_yaml():
    assert quantity.value(quantity.parse(4)) == 4
    assert quantity.milli_value(quantity.parse(0.5)) == 500


@pytest.mark.parametrize("bad", ["12XB", "", "abc", "1.2.3", "--1", "1e", "Ei", "1 Gi", "0x10"])
def test_invalid_quantities_name_the_value(bad):
    with pytest.raises(FieldError) as e:
        quantity.parse(bad, "spec.x")
    assert e.value.field == "spec.x"
    assert "is not a quantity" in e.value.message


def test_null_is_gos_zero_quantity_and_a_boolean_is_refused_in_json_terms():
    # Quantity.UnmarshalJSON takes null as the zero quantity (the key stays: a request of 0)
    assert quantity.parse(None, "spec.x") == 0
    with pytest.raises(FieldError) as e:
        quantity.parse(True, "spec.x")
    assert e.value.message == 'expected a quantity (a string such as "500m" or a number), not a boolean'
