"""What a user sees of natural-language search: chunk shapes, long functions, stable top results, priors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ragls.config import ChunkShape, Settings
from ragls.ingest.chunking import chunk_file
from ragls.ingest.formats import detect_format
from ragls.rag.priors import path_prior
from ragls.rag.service import RagService


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def chunks(rel: str, text: str, shape: ChunkShape | None = None) -> list[tuple[int, int, str | None]]:
    file_format = detect_format(rel)
    assert file_format is not None
    result = chunk_file(textwrap.dedent(text).lstrip("\n"), rel, file_format, shape or ChunkShape())
    return [(chunk.start_line, chunk.end_line, chunk.symbol) for chunk in result.chunks]


def long_body(n: int, word: str = "step") -> str:
    return "".join(f"    {word}_{i} = compute({i})\n" for i in range(n))


PY_CLASS = (
    '"""Redirect handling."""\n'
    "import os\n"
    "import re\n\n\n"
    "class SessionRedirectMixin:\n"
    '    """Follows redirects."""\n\n'
    "    def get_redirect_target(self, resp):\n" + long_body(40) + "\n"
    "    def resolve_redirects(self, resp):\n" + long_body(40) + "\n"
)


def test_no_chunk_is_a_lone_class_header_or_import_block() -> None:
    found = chunks("sessions.py", PY_CLASS)
    # The module docstring, the imports and the class line join the first method; each method is one chunk.
    assert [symbol for _, _, symbol in found] == [
        "SessionRedirectMixin.get_redirect_target",
        "SessionRedirectMixin.resolve_redirects",
    ]
    assert found[0][0] == 1


def test_small_neighbours_pack_together_and_keep_every_name() -> None:
    text = """
        package render

        // Data writes bytes with a content type.
        type Data struct {
            ContentType string
        }

        // Render writes the data.
        func (r Data) Render(w Writer) error {
            return w.Write(r.Data)
        }

        // WriteContentType writes the content type.
        func (r Data) WriteContentType(w Writer) {
            writeContentType(w, r.ContentType)
        }
    """
    file_format = detect_format("data.go")
    assert file_format is not None
    result = chunk_file(textwrap.dedent(text).lstrip("\n"), "data.go", file_format, ChunkShape())
    assert len(result.chunks) == 1
    chunk = result.chunks[0]
    assert (chunk.start_line, chunk.end_line) == (1, 16)
    assert {chunk.symbol, *chunk.also_defines} == {"Data", "Data.Render", "Data.WriteContentType"}
    # Symbols are still one per definition, whatever the chunks.
    assert [symbol.name for symbol in result.symbols] == ["Data", "Render", "WriteContentType"]


def test_a_long_function_is_one_chunk_and_a_long_class_is_cut_into_members() -> None:
    text = "def handle(request):\n" + long_body(300)
    assert chunks("big.py", text) == [(1, 301, "handle")]
    too_long = "def generated(request):\n" + long_body(ChunkShape().max_unit_lines + 5)
    assert len(chunks("gen.py", too_long)) > 1  # past max_unit_lines it falls back to line windows


def test_a_doc_comment_one_blank_line_above_a_definition_belongs_to_it() -> None:
    text = """
        /**
         * Respond with a status code.
         */

        res.status = function status(code) {
          this.statusCode = code;
          return this;
        };
    """
    assert chunks("response.js", text) == [(1, 8, "status")]


def test_items_inside_a_rust_macro_body_are_definitions_of_their_own() -> None:
    pause = "".join(f"        step_{i}();\n" for i in range(40))
    text = (
        "//! Time control for tests.\n\n"
        "cfg_test_util! {\n"
        "    /// Pauses time.\n"
        "    pub fn pause() {\n" + pause + "    }\n\n"
        "    cfg_rt! {\n"
        "        impl Clock {\n"
        "            pub(crate) fn advance(&self, duration: Duration) {\n" + pause + "            }\n"
        "        }\n"
        "    }\n"
        "}\n"
    )
    file_format = detect_format("src/time/clock.rs")
    assert file_format is not None
    result = chunk_file(text, "src/time/clock.rs", file_format, ChunkShape())
    assert {(symbol.qualified_name, symbol.start_line) for symbol in result.symbols} == {
        ("pause", 4),
        ("Clock", 49),
        ("Clock.advance", 50),
    }
    assert [chunk.symbol for chunk in result.chunks] == ["pause", "Clock"]


def dispatch_source() -> str:
    """A 154-line function whose lines 99-100 are the only ones about patterns."""
    body = [f"    route_{i} = request.routes[{i}]\n" for i in range(97)]
    body += ["    # a route whose pattern matches the request path wins;\n", "    # its handler is called.\n"]
    body += [f"    value_{i} = compute({i})\n" for i in range(53)]
    return "def dispatch(request):\n" + "".join(body) + "    return handler(request)\n"


@pytest.fixture
def service(tmp_path: Path) -> RagService:
    answer = "def {name}():\n    # the router matches a request path to a route and calls its handler\n    return 1\n"
    files = {
        "src/router.py": dispatch_source(),
        "src/matching.py": answer.format(name="match_route"),
        "README.md": "# Router\n\nThe router matches a request path to a route and calls its handler.\n",
        "tests/test_matching.py": answer.format(name="test_match_route"),
    }
    for i in range(40):
        comment = f"# handle request path {i} for route {i % 7}"
        files[f"src/handlers/h{i}.py"] = f"def handler_{i}(request):\n    {comment}\n    return route_{i}(request)\n"
    service = RagService(write(tmp_path, files), Settings())
    service.index_directory()
    return service


def test_the_top_three_do_not_depend_on_top_k(service: RagService) -> None:
    for query in ("which route matches a request path", "handler for a route", "request"):
        tops = [[r.document.id for r in service.search(query, k)[:3]] for k in (3, 5, 10, 50)]
        assert tops[0] and all(top == tops[0] for top in tops), (query, tops)


def test_a_long_result_shows_its_best_window_and_says_what_it_spans(service: RagService) -> None:
    results = service.search("whose pattern wins", 5)
    top = results[0]
    metadata = top.document.metadata
    assert top.document.id == "src/router.py#dispatch"
    assert (metadata["unitStartLine"], metadata["unitEndLine"]) == (1, 154)
    assert metadata["startLine"] <= 99 and metadata["endLine"] >= 100
    assert metadata["endLine"] - metadata["startLine"] + 1 == ChunkShape().max_lines
    assert "# a route whose pattern matches the request path wins;" in top.document.content
    # The whole unit is still there for whoever asks for the document itself.
    whole = service.get_document("src/router.py#dispatch")
    assert whole is not None and whole.content.count("\n") == 153


def test_code_outranks_its_test_and_its_readme(service: RagService) -> None:
    files = [r.document.metadata["file"] for r in service.search("router matches a request path to a route", 10)]
    assert files.index("src/matching.py") < files.index("README.md")
    assert files.index("src/matching.py") < files.index("tests/test_matching.py")
    assert path_prior("docs/guide.md") == path_prior("README.rst") == 0.7
    assert path_prior("tests/test_router.py") == 0.7
    assert path_prior("CHANGELOG.md") == pytest.approx(0.49)
    assert path_prior("src/router.py") == 1.0
