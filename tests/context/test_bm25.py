"""score_content's BM25 (idf per term and norm per file computed once) gives
exactly the floats of the per-contribution definition, ``_bm25``."""

from __future__ import annotations

import math
import random
from collections import Counter

from tooldeck.context.query import parse_query
from tooldeck.context.retrieve import IDENT_WEIGHT, FileInfo, Scores, _bm25, score_content


class Hits:
    """Term counts as ripgrep would have given them (the input of the scoring)."""

    def __init__(self, hits: dict[str, Counter[str]]) -> None:
        self.hits = hits

    def result(self) -> dict[str, Counter[str]]:
        return self.hits


def test_scores_equal_the_definition() -> None:
    rnd = random.Random(9)
    query = parse_query("retry the HTTPAdapter when max_retries is exceeded in the pool")
    terms = list(query.terms)
    files = [FileInfo(f"/r/f{i}.py", "r", f"f{i}.py", f"f{i}.py", rnd.randint(0, 90_000)) for i in range(400)]
    hits = {
        f.rel: Counter({t: rnd.randint(1, 64) for t in rnd.sample(terms, rnd.randint(1, len(terms)))})
        for f in rnd.sample(files, 150)
    }
    scored = Scores()
    score_content(None, query, files, scored, [("r", Hits(hits))])  # type: ignore[arg-type,list-item]
    n = len(files)
    df: Counter[str] = Counter()
    for counts in hits.values():
        df.update(counts.keys())
    avg = sum(f.size for f in files) / n
    by_rel = {f.rel: f for f in files}
    assert len(scored) == len(hits)
    for rel, counts in hits.items():
        want_total, want = 0.0, Counter()
        for term, tf in counts.items():
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            weight = IDENT_WEIGHT if term in query.identifiers else 1.0
            c = weight * _bm25(tf, idf, max(by_rel[rel].size, 1), avg)
            want_total += c
            want[term] += c
        s = scored[by_rel[rel].abs]
        assert s.content == want_total and s.term_scores == want  # bit for bit
