"""compare --frontier's two cells for a variant whose frontier varies its register split (ws-regalloc's
``producer_regs``) and for one that compiles nowhere: they say which splits are spill-free, or that nothing
compiled, never "spills at every level" (an occupancy frontier's words, untrue for both)."""

from types import SimpleNamespace as NS

from vgprscope.analysis.frontier.view import next_level_cell, spill_free_cell, split_runs


def _level(setting, ok=True, spills=0):
    return NS(ok=ok, spill_free=ok and spills == 0, plan=NS(setting=setting, target=None))


def _variant(levels, split=True):
    k = NS(split=split, knob="producer_regs", levels=tuple(levels), next_level=None, unit="blocks/SM")
    return NS(limiting=k, spill_free_occupancy=None)


def test_a_split_frontier_names_its_spill_free_settings_as_runs():
    vf = _variant([_level(24), _level(56), _level(88, spills=32), _level(120), _level(152, ok=False)])
    assert split_runs(vf.limiting) == "24-56, 120"
    assert spill_free_cell(vf) == "split knob"
    assert next_level_cell(vf) == "producer_regs 24-56, 120 spill-free"


def test_a_split_frontier_that_spills_at_every_setting_says_so():
    vf = _variant([_level(24, spills=8), _level(56, spills=16)])
    assert next_level_cell(vf) == "producer_regs: spills at every setting"


def test_a_variant_that_compiles_nowhere_is_not_said_to_spill():
    assert next_level_cell(_variant([_level(24, ok=False)])) == "compiles at no setting"
    assert spill_free_cell(_variant([_level(24, ok=False)])) == "-"
    assert next_level_cell(_variant([_level(None, ok=False)], split=False)) == "compiles at no level"
