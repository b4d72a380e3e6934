"""The per-call paths issue #38 made cheaper keep their results: kept selectors, the sparse gather, the bridge."""

from diffinterface.frozen import Frozen


def test_one_keyword_and_one_positional_pair_never_share_a_kept_value():
    class Labelled(Frozen):
        name: object = None
        value: object = None

    positional = Labelled(
        ("value", (1,))
    )  # its key would read like the keyword call's without a marker
    keyword = Labelled(value=(1,))
    assert positional.name == ("value", (1,)) and positional.value is None
    assert keyword.name is None and keyword.value == (1,)
    assert Labelled(value=(1,)) is keyword
