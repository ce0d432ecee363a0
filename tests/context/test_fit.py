"""The budget fitter: full → slices → codemap → omitted, never over budget."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tooldeck.context.fit import Candidate, fit
from tooldeck.state.selections import LineRange


def cand(i: int, full: int | None, codemap: int | None, slices: int | None = None) -> Candidate:
    sl = ((LineRange(1, 10),), slices) if slices else None
    return Candidate(f"/r/f{i}.py", f"f{i}.py", 1.0 / (i + 1), [f"reason {i}"], full, codemap, sl)


def test_top_files_full_when_they_fit_and_the_rest_as_codemaps():
    choices = fit([cand(0, 1000, 100), cand(1, 1200, 120), cand(2, 900, 90)], budget=10_000)
    assert [c.mode for c in choices] == ["full", "full", "full"]
    small = fit([cand(0, 1000, 100), cand(1, 1200, 120), cand(2, 900, 90)], budget=1400)
    assert small[0].mode == "full" and {c.mode for c in small[1:]} <= {"codemap", "omitted"}
    assert sum(c.tokens for c in small) <= 1400


def test_a_file_too_big_for_full_is_sliced_then_codemapped():
    choices = fit([cand(0, 50_000, 800, slices=2_000)], budget=10_000)
    assert choices[0].mode == "slices" and choices[0].ranges
    choices = fit([cand(0, 50_000, 800, slices=20_000)], budget=10_000)
    assert choices[0].mode == "codemap"


def test_nothing_fits_means_omitted_with_a_reason():
    choices = fit([cand(0, 5000, 3000)], budget=1000)
    assert choices[0].mode == "omitted" and "budget" in choices[0].why


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(1, 20_000)),
            st.one_of(st.none(), st.integers(1, 3_000)),
            st.one_of(st.none(), st.integers(1, 8_000)),
        ),
        max_size=60,
    ),
    st.integers(1000, 60_000),
)
def test_never_over_budget_and_every_mode_has_a_cost(specs, budget):
    cands = [cand(i, f, c, s) for i, (f, c, s) in enumerate(specs)]
    choices = fit(cands, budget)
    assert len(choices) == len(cands)
    assert sum(c.tokens for c in choices) <= budget
    for ch in choices:
        if ch.mode == "full":
            assert ch.candidate.full is not None
        if ch.mode == "codemap":
            assert ch.candidate.codemap is not None
        if ch.mode == "slices":
            assert ch.candidate.slices is not None


def test_half_the_budget_buys_breadth_before_depth():
    """30 ranked files of 3,000 tokens (500 as a codemap) in 30,000 tokens:
    every one is at least a codemap and the best ones are whole, rather than
    ten whole files and the rest left out."""
    cands = [cand(i, 3000, 500) for i in range(30)]
    choices = fit(cands, budget=30_000)
    assert choices[0].mode == "full"
    assert all(c.mode != "omitted" for c in choices)
    assert sum(c.tokens for c in choices) <= 30_000


def test_a_file_without_a_codemap_enters_by_its_cheapest_view():
    """A short doc page (no codemap) whose slices would cost more than its
    text enters whole in the coverage pass, so the slices' cost does not take
    the room that lets the best-ranked file be shown whole."""
    cands = [cand(0, 3000, 100), cand(1, 100, None, slices=900)] + [cand(i, 3000, 100) for i in range(2, 10)]
    choices = fit(cands, budget=4000)
    assert choices[0].mode == "full"
    assert choices[1].mode == "full" and choices[1].tokens == 100
    assert all(c.mode != "omitted" for c in choices)


def test_the_lead_goes_deep_then_breadth_before_lower_ranks_go_deep():
    """Three small lead files are shown whole; then the next ranks are covered
    by codemaps before the fourth file is upgraded to its 4,000-token text."""
    cands = [cand(i, 1000, 100) for i in range(3)] + [cand(i, 4000, 500) for i in range(3, 31)]
    choices = fit(cands, budget=20_000)
    assert [c.mode for c in choices[:3]] == ["full"] * 3
    assert sum(c.mode == "omitted" for c in choices) <= 1
    assert sum(c.tokens for c in choices) <= 20_000


def test_a_lead_file_over_a_quarter_of_the_budget_is_sliced_so_every_codemap_fits():
    """Tuned on click's commits 41-120: the second-best file shown whole
    (9,000 of 30,000 tokens) would leave the files ranked 20-40 out."""
    cands = [cand(0, 2_000, 200), cand(1, 9_000, 700, slices=1_500)]
    cands += [cand(i, 8_000, 600) for i in range(2, 40)]
    choices = fit(cands, budget=30_000)
    assert choices[0].mode == "full" and choices[1].mode == "slices"
    assert all(c.mode == "codemap" for c in choices[2:])  # every file shown, none dropped for depth
    assert sum(c.tokens for c in choices) <= 30_000


def test_a_doc_page_without_room_for_its_slices_is_shown_by_its_headings():
    outline = (LineRange(1, 1), LineRange(9, 9))
    doc = Candidate("/r/guide.md", "guide.md", 0.5, ["r"], 2_000, None, ((LineRange(1, 60),), 1_500), (outline, 40))
    choices = fit([cand(0, 900, 100), doc], budget=1_000)
    assert choices[1].mode == "slices" and choices[1].ranges == outline and choices[1].tokens == 40
    assert "headings only" in choices[1].why
    # with room, the lead's depth comes first and the page still gets its slices around the task's words
    roomy = fit([cand(0, 900, 100), doc], budget=10_000)
    assert roomy[1].mode in ("full", "slices") and roomy[1].tokens > 40
