"""
Zero-shot cross-lingual evaluation (mLUKE paper, Ri et al., ACL 2022, §4): a model fine-tuned on English is evaluated
on the same task in other languages, one file per language (XQuAD, MLQA, RELX, CoNLL-2002/2003), and the results are
reported per language with their average. `allennlp evaluate-cross-lingual` runs it; this module holds what does not
need a model: the language of a file, the results table, and the G-XLT files built from parallel SQuAD files.

Languages from file names, as the datasets are distributed:
- MLQA `{dev,test}-context-de-question-en.json` and the G-XLT files built here, `xquad-context-de-question-en.json`:
  the context's language (`de`; the answers are in it, so MLQA scores with it) and the question's (`en`);
- XQuAD `xquad.de.json`; RELX `RELX_de.txt`;
- CoNLL-2002 `esp.*` (es), `ned.*` (nl), CoNLL-2003 `deu.*` (de), `eng.*` (en).

G-XLT (generalised cross-lingual transfer, MLQA paper §5.2): the question in one language, the context in another.
MLQA ships these pairs; XQuAD's translations are parallel (every language has the same articles, paragraphs and
question ids), so a pair is the context file with each question replaced by the other language's question of the same
id (`gxlt_pair`).
"""

import json
import os
import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from luke_allennlp.resources.files import load_json
from luke_allennlp.resources.hf_datasets import source_name

_CONTEXT_QUESTION = re.compile(r"context-([A-Za-z]{2,3})-question-([A-Za-z]{2,3})(?![A-Za-z])")
_MLQA_CONFIG = re.compile(r"^mlqa\.([A-Za-z]{2,3})\.([A-Za-z]{2,3})$")  # the Hub's MLQA: mlqa.CONTEXT.QUESTION
_NAME_PATTERNS = (
    re.compile(r"^xquad\.([A-Za-z]{2,3})(?:\.json)?$"),  # XQuAD (the Hub's configuration: xquad.de)
    re.compile(r"^RELX_([A-Za-z]{2,3})\.txt$"),  # RELX
)
_CONLL_PREFIXES = {"esp": "es", "ned": "nl", "deu": "de", "eng": "en"}  # CoNLL-2002 / 2003 file names
_CONLL_SPLITS = ("train", "testa", "testb")


def languages_from_name(path: str) -> Tuple[Optional[str], Optional[str]]:
    """(language of the answers / context, language of the questions) as the file's name tells them; None where it
    does not. The question language is only known for G-XLT names (`...context-de-question-en...`); elsewhere the
    question is in the file's language. A Hub dataset's configuration names them (`hf://xquad:xquad.de@validation`,
    `hf://mlqa:mlqa.de.en@test`)."""
    name = source_name(path)
    pair = _CONTEXT_QUESTION.search(name) or _MLQA_CONFIG.match(name)
    if pair:
        return pair.group(1).lower(), pair.group(2).lower()
    for pattern in _NAME_PATTERNS:
        match = pattern.match(name)
        if match:
            return match.group(1).lower(), None
    prefix, _, split = name.partition(".")
    if prefix in _CONLL_PREFIXES and split.split(".")[0] in _CONLL_SPLITS:
        return _CONLL_PREFIXES[prefix], None
    return None, None


def parse_input(argument: str) -> Tuple[Optional[str], str]:
    """`LANG=PATH` -> (LANG, PATH); a plain `PATH` -> (None, PATH)."""
    match = re.match(r"^([A-Za-z]{2,3}(?:-[A-Za-z]{2,4})?)=(.+)$", argument)
    return (match.group(1), match.group(2)) if match else (None, argument)


# What the table shows per task, as (metric name, column): each file's metrics decide (the first family they have).
_COLUMN_FAMILIES = (
    (("em", "EM"), ("f1", "F1")),  # extractive QA (SQuAD, XQuAD, MLQA)
    (("f1", "micro F1"), ("macro_f1", "macro F1")),  # relation classification (KBP37, RELX)
    (("f1", "span F1"),),  # NER
)


def table_columns(metrics: Dict[str, Any]) -> Tuple[Tuple[str, str], ...]:
    """The (metric, column) pairs of the results table for a file with these metrics."""
    if "em" in metrics:
        return _COLUMN_FAMILIES[0]
    if "macro_f1" in metrics:
        return _COLUMN_FAMILIES[1]
    if "f1" in metrics:
        return _COLUMN_FAMILIES[2]
    return tuple((name, name) for name, value in metrics.items() if isinstance(value, float) and name != "loss")


# How each scoring of extractive QA scores an answer (what results.md says made its figures).
SCORING_NAMES = {
    "squad": "SQuAD v1.1's official script (exact match and token F1 after its English answer normalisation)",
    "mlqa": "MLQA's official script (exact match and token F1 after the normalisation of each file's answer language)",
    "jglue": "JGLUE's JSQuAD script (exact match and character F1)",
}


def scoring_of(metrics: Dict[str, Any], qa_scoring: Optional[str] = None) -> str:
    """What made the table's figures for files with these metrics (`qa_scoring`: extractive QA's scoring)."""
    if qa_scoring is not None:
        return SCORING_NAMES[qa_scoring]
    columns = table_columns(metrics)
    if columns == _COLUMN_FAMILIES[1]:
        return "TACRED's scorer (micro F1, the negative class left out) and SemEval-2010 Task 8's (macro F1)"
    if columns == _COLUMN_FAMILIES[2]:
        return "conlleval's span F1 (an entity counts if its start, end and type all match)"
    return "the model's own metrics"


def summarise(rows: Sequence[Dict[str, Any]], scoring: Optional[str] = None) -> Dict[str, Any]:
    """
    The results of every file (`rows`: `file`, `language`, `question_language`, `examples`, `metrics`) with the
    average over them of each table column: unweighted, one vote per file, as the papers average over languages
    (with one file per language it is the average over languages; over a G-XLT grid, over its pairs). `scoring`
    says what made the figures (kept as the summary's `scoring`).
    """
    if not rows:
        raise ValueError("no files were evaluated")
    columns = table_columns(rows[0]["metrics"])
    for row in rows[1:]:
        if table_columns(row["metrics"]) != columns:
            raise ValueError(f"{row['file']}: its metrics differ from {rows[0]['file']}'s (another task?)")
    average = {name: sum(row["metrics"][name] for row in rows) / len(rows) for name, _ in columns}
    summary = {"columns": [list(column) for column in columns], "files": list(rows), "average": average}
    return {**summary, "scoring": scoring} if scoring else summary


def _percent(value: float) -> str:
    return f"{100 * value:.2f}"


def markdown_table(summary: Dict[str, Any]) -> str:
    """The summary as Markdown: a line saying the scores are percent and what scored them, one row per file and the
    average; where there are G-XLT files
    (with a question language), also the grid of the last column over them, question language x context language."""
    columns = [tuple(column) for column in summary["columns"]]
    rows = summary["files"]
    gxlt = [row for row in rows if row.get("question_language")]
    head = ["file", "language"] + (["question language"] if gxlt else []) + ["examples"]
    head += [f"{title} (%)" for _, title in columns]
    scored = f", scored by {summary['scoring']}" if summary.get("scoring") else ""
    lines = [
        f"Scores in percent (results.json holds them as fractions of 1){scored}; the average weighs every file alike.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for row in rows:
        cells = [f"`{os.path.basename(row['file'])}`", row["language"]]
        cells += [row.get("question_language") or ""] if gxlt else []
        cells += [str(row["examples"])] + [_percent(row["metrics"][name]) for name, _ in columns]
        lines.append("| " + " | ".join(cells) + " |")
    cells = [f"**average** ({len(rows)} files)", ""] + ([""] if gxlt else []) + [str(sum(r["examples"] for r in rows))]
    lines.append("| " + " | ".join(cells + [_percent(summary["average"][name]) for name, _ in columns]) + " |")
    if gxlt:
        name, title = columns[-1]
        contexts = sorted({row["language"] for row in gxlt})
        questions = sorted({row["question_language"] for row in gxlt})
        cell = {(row["question_language"], row["language"]): row["metrics"][name] for row in gxlt}
        lines += ["", f"G-XLT {title} (%), question language (rows) x context language (columns):", ""]
        lines += ["| question \\ context | " + " | ".join(contexts) + " |", "|" + "---|" * (len(contexts) + 1)]
        for question in questions:
            scores = [_percent(cell[question, c]) if (question, c) in cell else "" for c in contexts]
            lines.append(f"| {question} | " + " | ".join(scores) + " |")
    return "\n".join(lines) + "\n"


# --- G-XLT pairs from parallel SQuAD files ------------------------------------------------------------------------


def _questions_by_id(data: Dict[str, Any], name: str) -> Dict[str, str]:
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError(f"{name}: not a SQuAD JSON file with a top-level 'data' list")
    questions: Dict[str, str] = {}
    for article in data["data"]:
        for paragraph in article.get("paragraphs", []):
            for qa in paragraph.get("qas", []):
                if not isinstance(qa.get("id"), str) or not isinstance(qa.get("question"), str):
                    raise ValueError(f"{name}: a question without a string 'id' and 'question': {str(qa)[:200]}")
                if qa["id"] in questions:
                    raise ValueError(f"{name}: question id {qa['id']} occurs twice")
                questions[qa["id"]] = qa["question"]
    return questions


def gxlt_pair(context_path: str, question_path: str) -> Dict[str, Any]:
    """
    The G-XLT file of two parallel SQuAD files: `context_path`'s articles, passages and answers, each question
    replaced by `question_path`'s question of the same id. Both must hold the same question ids (an error names
    the first one missing from either).
    """
    context_data, question_data = load_json(context_path), load_json(question_path)
    context_questions = _questions_by_id(context_data, context_path)
    questions = _questions_by_id(question_data, question_path)
    for ids, path, others, other in (
        (context_questions, context_path, questions, question_path),
        (questions, question_path, context_questions, context_path),
    ):
        missing = [question_id for question_id in ids if question_id not in others]
        if missing:
            raise ValueError(
                f"{path} and {other} are not parallel: {len(missing)} question ids of the first are not in the "
                f"second, e.g. {missing[0]}"
            )
    for article in context_data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["question"] = questions[qa["id"]]
    return context_data


def write_gxlt_pairs(
    files: Dict[str, str], output_dir: str, prefix: str = "xquad", languages: Optional[Iterable[str]] = None
) -> List[str]:
    """
    Writes `{prefix}-context-{c}-question-{q}.json` into `output_dir` for every ordered pair of languages of
    `files` ({language: path}; `languages`: a subset), the diagonal (q = c, the file itself) included so that the
    grid is whole. Returns the paths written.
    """
    chosen = sorted(files) if languages is None else list(languages)
    unknown = [language for language in chosen if language not in files]
    if unknown:
        raise ValueError(f"no file for the languages {', '.join(unknown)} (files for: {', '.join(sorted(files))})")
    os.makedirs(output_dir, exist_ok=True)
    written = []
    for context in chosen:
        for question in chosen:
            data = gxlt_pair(files[context], files[question])
            path = os.path.join(output_dir, f"{prefix}-context-{context}-question-{question}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(data, f, ensure_ascii=False)
            written.append(path)
    return written
