"""Emptied function bodies in brace languages: the codemap stays the one the
whole file gives.

The reference is the same extraction with emptying turned off (the real text
parsed), never a hand-written expectation.
"""

from __future__ import annotations

import pytest

from tooldeck.codemap import extract, grammars, hollow, hollow_braces, lexer


def both_ways(language: str, src: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    fast = extract.extract_rows(language, src)
    with monkeypatch.context() as m:
        m.setattr(hollow_braces, "hollow", lambda _language, _src, _cut: None)
        whole = extract.extract_rows(language, src)
    return fast, whole


SOURCES: dict[str, tuple[str, bytes]] = {
    "go": (
        "go",
        b"""package p

import "fmt"

var handler = func(x int) int {
\treturn x
}

type T struct {
\tA int
}

// M does a thing.
func (t *T) M(x int) (int, error) {
\ts := "}\\n{"
\tr := `
}
`
\tif x > 0 {
\t\treturn 1, nil
\t}
\treturn len(s) + len(r), fmt.Errorf("x")
}

func F() {
\tfunc() {
\t}()
}
""",
    ),
    "rust": (
        "rust",
        b"""use std::fmt;

macro_rules! make {
    ($n:ident) => {
        fn $n() -> u8 {
            1
        }
    };
}

pub trait Shape {
    fn area(&self) -> f64;
}

impl fmt::Display for S {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        use std::io::Write;
        let s = "}";
        let c = '{';
        write!(f, "{}", s)
    }
}

pub(crate) fn free<T: Clone>(x: T) -> T
where
    T: Copy,
{
    x
}

fn bad_indent() {
    let x = 1;
  }
fn after() {}
""",
    ),
    "java": (
        "java",
        b"""package p;

public class A extends B implements C {
    static {
        init();
    }

    private final Runnable r = () -> {
        run();
    };

    private final Object o = new Object() {
        public String toString() {
            return "}";
        }
    };

    enum E {
        X(1) {
            int f() {
                return 2;
            }
        };
        E(int v) {
        }
    }

    public A(int x) {
        super(x);
    }

    private static int[] badly(int[] x) {
         return x;
     }

     int after(int y) {
         return y;
     }

    @Override
    public <T> T m(T t) throws Exception {
        if (t == null) {
            throw new Exception("{");
        }
        return t;
    }
}
""",
    ),
    "javascript": (
        "javascript",
        b"""import { a } from "./a.js";

export function f(x) {
  const re = /[}{]/g;
  return `${x}}`.replace(re, "");
}

describe("suite", () => {
  function helper() {
    return 1;
  }
  it("works", () => {
    helper();
  });
});

export class K extends Base {
  constructor(a) {
    super(a);
  }

  static make(...args) {
    return new K(...args);
  }
}

const o = {
  m(x) {
    return x;
  },
};

if (typeof module !== "undefined") {
  module.exports = f;
}
""",
    ),
    "typescript": (
        "typescript",
        b"""export interface I {
  m(x: number): string;
}

export enum Color {
  Red,
}

export abstract class A<T> implements I {
  private readonly x: number = 1;

  public m(x: number): string {
    return String(x);
  }

  protected async load(): Promise<void> {
    await fetch("}");
  }
}

export const g = async (a: string): Promise<number> => {
  return a.length;
};

declare global {
  interface Window {
    z: number;
  }
}
""",
    ),
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_emptied_bodies_give_the_whole_files_codemap(name: str, monkeypatch: pytest.MonkeyPatch):
    language, src = SOURCES[name]
    emptied = hollow_braces.hollow(language, src, lexer.pieces(language, src))
    assert emptied is not None  # the fast path is attempted
    fast, whole = both_ways(language, src, monkeypatch)
    assert fast == whole


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_an_emptied_file_keeps_every_offset_and_line_break(name: str):
    language, src = SOURCES[name]
    emptied = hollow_braces.hollow(language, src, lexer.pieces(language, src))
    assert emptied is not None
    text, openings = emptied
    assert len(text) == len(src)
    assert [i for i, c in enumerate(text) if c == 10] == [i for i, c in enumerate(src) if c == 10]
    assert all(text[at] == src[at] == ord("{") for at in openings)


def test_only_function_bodies_are_emptied_or_the_whole_text_is_parsed():
    language, src = SOURCES["java"]
    # an enum constant's body looks like a method's: the guess takes it, the check refuses it
    text, openings = hollow_braces.hollow(language, src, lexer.pieces(language, src))  # type: ignore[misc]
    assert not hollow_braces.confirmed(language, grammars.parse(language, text, hollow.ranges(text)), openings)
    constant_body = b"X(1) {\n            int f() {\n                return 2;\n            }\n        };"
    plain = src.replace(constant_body, b"X(1);")
    text, openings = hollow_braces.hollow(language, plain, lexer.pieces(language, plain))  # type: ignore[misc]
    tree = grammars.parse(language, text, hollow.ranges(text))
    assert hollow_braces.confirmed(language, tree, openings)
    owners = {tree.root_node.descendant_for_byte_range(at, at + 1).parent.parent.type for at in openings}
    assert owners <= hollow_braces.FUNCTIONS["java"] and len(openings) >= 5
    # a block that is no function's body (the anonymous class's) is refused by the check
    anon = plain.index(b"new Object() {") + len(b"new Object() ")
    assert not hollow_braces.confirmed(language, grammars.parse(language, plain), [anon])


def test_a_badly_indented_body_is_not_emptied_past_its_end():
    language, src = SOURCES["java"]
    text, _ = hollow_braces.hollow(language, src, lexer.pieces(language, src))  # type: ignore[misc]
    assert b"int after(int y) {" in text  # the function after the misindented one is still there


def test_rust_uses_inside_a_function_stay_and_macro_bodies_are_left_alone():
    language, src = SOURCES["rust"]
    text, _ = hollow_braces.hollow(language, src, lexer.pieces(language, src))  # type: ignore[misc]
    assert b"use std::io::Write;" in text
    assert b"fn $n() -> u8 {\n            1" in text
    assert b'let s = "}";' not in text


def test_a_string_the_lexer_misreads_never_hides_the_next_function(monkeypatch: pytest.MonkeyPatch):
    # a backtick in a regular expression after `return` reads as a template literal up to the
    # next backtick, in the next function: blanked, it hides this body's end and that header
    src = b"function a(x) {\n  return /`/.test(x);\n}\n\nfunction b() {\n  return `y`;\n}\n"
    fast, whole = both_ways("javascript", src, monkeypatch)
    assert fast == whole
    assert [row[0] for row in fast[1]] == ["a", "b"]  # type: ignore[index]

