"""Reading a task: identifiers, paths and words."""

from tooldeck.context.query import is_code_like, parse_query, subwords


def test_identifiers_paths_and_words_are_separated():
    q = parse_query("Fix HTTPAdapter.send retry in requests/adapters.py when max_retries is 0; see README.md")
    assert "HTTPAdapter.send" in q.identifiers and "HTTPAdapter" in q.identifiers and "max_retries" in q.identifiers
    assert q.paths == ("requests/adapters.py", "README.md")
    assert {"http", "adapter", "retry", "retries", "adapters"} <= set(q.words)
    assert "when" not in q.words and "fix" not in q.words


def test_code_words_and_stopwords_never_become_terms():
    q = parse_query("return the value of self when the function returns None")
    assert not {"return", "self", "function", "none", "value"} & set(q.terms)


def test_plural_folding_keeps_both_forms():
    q = parse_query("sessions leak")
    assert "sessions" in q.words and "session" in q.words


def test_code_like_detection():
    assert is_code_like("max_retries") and is_code_like("HTTPAdapter") and is_code_like("getUser")
    assert is_code_like("os.path") and is_code_like("MAX_SIZE")
    assert not is_code_like("retry") and not is_code_like("Retry")


def test_subwords_split_camel_and_snake_case():
    assert subwords("HTTPAdapter.send_request") == ["http", "adapter", "send", "request"]
