"""In-tree plugins, one module each, registered under kube-scheduler's names."""

from __future__ import annotations

from ..framework.interface import Plugin
from .defaultbinder import DefaultBinder
from .defaultpreemption.plugin import DefaultPreemption
from .dynamicresources import DynamicResources
from .imagelocality import ImageLocality
from .interpodaffinity.plugin import InterPodAffinity
from .nodeaffinity import NodeAffinity
from .nodedeclaredfeatures import NodeDeclaredFeatures
from .nodename import NodeName
from .nodeports import NodePorts
from .noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from .noderesources.fit import NodeResourcesFit
from .nodeunschedulable import NodeUnschedulable
from .nodevolumelimits import NodeVolumeLimits
from .podtopologyspread.plugin import PodTopologySpread
from .queuesort import PrioritySort
from .schedulinggates import SchedulingGates
from .selectorspread import SelectorSpread
from .tainttoleration import TaintToleration
from .volumebinding import VolumeBinding
from .volumerestrictions import VolumeRestrictions
from .volumezone import VolumeZone

REGISTRY: dict[str, type[Plugin]] = {
    cls.name: cls
    for cls in (
        SchedulingGates,
        PrioritySort,
        NodeUnschedulable,
        NodeName,
        TaintToleration,
        NodeAffinity,
        NodePorts,
        NodeResourcesFit,
        VolumeRestrictions,
        NodeVolumeLimits,
        VolumeBinding,
        VolumeZone,
        PodTopologySpread,
        InterPodAffinity,
        DynamicResources,
        DefaultPreemption,
        NodeResourcesBalancedAllocation,
        ImageLocality,
        DefaultBinder,
        NodeDeclaredFeatures,
        SelectorSpread,  # not in kube-scheduler v1.34.1: enabled by name only
    )
}
