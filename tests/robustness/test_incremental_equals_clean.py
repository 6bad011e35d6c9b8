"""An index kept fresh by hundreds of edits answers exactly like a clean index of the same files, also after a
restart: same results, same order, same scores."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ragls.config import Settings
from ragls.rag.service import RagService

WORDS = [
    "request",
    "route",
    "handler",
    "session",
    "cookie",
    "redirect",
    "header",
    "token",
    "parse",
    "render",
    "cache",
    "queue",
    "worker",
    "task",
    "signal",
    "stream",
    "buffer",
    "timeout",
    "retry",
    "error",
]


def source(rng: random.Random) -> str:
    functions = []
    for index in range(rng.randint(1, 6)):
        name = "_".join(rng.sample(WORDS, 2)) + f"_{index}"
        body = "\n".join(
            f"    {rng.choice(WORDS)}_{rng.randint(0, 30)} = {rng.choice(WORDS)}({rng.randint(0, 9)})"
            f"  # {' '.join(rng.choices(WORDS, k=4))}"
            for _ in range(rng.randint(2, 40))
        )
        functions.append(f'def {name}():\n    """{" ".join(rng.choices(WORDS, k=8))}."""\n{body}\n')
    return "\n\n".join(functions)


def answers(service: RagService, queries: list[str]) -> list[list[tuple[str, float]]]:
    return [[(result.document.id, result.score) for result in service.search(query, 10)] for query in queries]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_edits_then_the_same_answers_as_a_fresh_index(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "workspace"
    root.mkdir()
    # Copies of a few files make equal scores common: their order must not depend on the order of edits.
    copies = [source(rng) for _ in range(5)]
    n_files = 400
    for index in range(n_files):
        (root / f"m{index}.py").write_text(source(rng) if index % 3 else copies[index % 5], encoding="utf-8")
    edited = RagService(root, Settings(cache_dir=str(tmp_path / "edited-cache")))
    edited.index_directory()
    for _ in range(300):
        path = root / f"m{rng.randrange(n_files + 10)}.py"
        roll = rng.random()
        if roll < 0.2 and path.exists():
            path.unlink()
        elif roll < 0.5:
            path.write_text(rng.choice(copies), encoding="utf-8")
        else:
            path.write_text(source(rng), encoding="utf-8")
        edited.update_paths([path.name])
    clean = RagService(root, Settings(cache_dir=str(tmp_path / "clean-cache")))
    clean.index_directory()
    queries = [" ".join(rng.choices(WORDS, k=rng.randint(1, 6))) for _ in range(40)]
    expected = answers(clean, queries)
    assert answers(edited, queries) == expected
    edited.close()
    restarted = RagService(root, Settings(cache_dir=str(tmp_path / "edited-cache")))
    restarted.index_directory()
    assert answers(restarted, queries) == expected
    restarted.close()
    clean.close()
