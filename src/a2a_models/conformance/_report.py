"""Reports: a progress line per check, and text / JSON / JUnit XML / HTML summaries.

JSON and JUnit carry each check's spec section and the ids of the catalogue
sentences it tests; the HTML report is one self-contained file grouped by spec
section, with the request/response evidence of every failure.
"""

from __future__ import annotations

import html
import json
import re
import textwrap
import xml.etree.ElementTree as ET
from collections import Counter

from ._registry import CheckResult, Level, Status
from ._runner import SuiteReport

__all__ = [
    "FORMATS",
    "progress_line",
    "render",
    "render_html",
    "render_json",
    "render_junit",
    "render_text",
]

_LABEL = {
    Status.PASS: "PASS",
    Status.FAIL: "FAIL",
    Status.SKIP: "SKIP",
    Status.NOT_APPLICABLE: "N/A ",
}


def progress_line(r: CheckResult) -> str:
    """``PASS  MUST    get.unknown-task [1.0-jsonrpc]  §3.1.3  0.01s  note``."""
    msg = r.message.replace("\n", " ")
    if len(msg) > 160:
        msg = msg[:157] + "..."
    where = r.key[len(r.id) :]
    return (
        f"{_LABEL[r.status]}  {r.level.value:<6}  {r.id}{where}  {r.section}  "
        f"{r.duration:.2f}s" + (f"  {msg}" if msg else "")
    )


def render_text(report: SuiteReport, *, evidence: bool = True) -> str:
    t = report.target
    out = [
        "A2A conformance report",
        f"  target:     {t.url}",
        f"  card:       {t.card_url} ({'ok' if t.card is not None else t.card_problem})",
        "  endpoints:  " + (", ".join(e.describe() for e in t.endpoints) or "(none)"),
        f"  versions:   {', '.join(report.versions) or '(none)'}   "
        f"transports: {', '.join(report.transports)}",
        f"  started:    {report.started_at}   duration: {report.duration:.2f}s",
    ]
    out += [f"  note:       {n}" for n in report.notes]
    out.append("")
    rows = [("status", "level", "check", "§", "message")]
    for r in report.results:
        msg = r.message.replace("\n", " ")
        rows.append(
            (
                _LABEL[r.status].strip(),
                r.level.value,
                r.key,
                r.section,
                msg if len(msg) <= 90 else msg[:87] + "...",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        out.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(row[:4])) + "  " + row[4])
    out.append("")
    counts = report.counts()
    by_level = Counter(r.level for r in report.results if r.status is Status.FAIL)
    out.append(
        f"{counts['pass']} passed, {counts['fail']} failed "
        f"({by_level[Level.MUST]} MUST, {by_level[Level.SHOULD]} SHOULD, {by_level[Level.MAY]} MAY), "
        f"{counts['skip']} skipped, {counts['not-applicable']} not applicable"
    )
    out.append(
        "RESULT: "
        + (
            "NOT CONFORMANT (a MUST check failed)"
            if report.exit_code
            else "conformant (no MUST check failed)"
        )
    )
    if evidence:
        failures = [r for r in report.results if r.status is Status.FAIL]
        if failures:
            out += ["", "Failures with evidence", "======================"]
        for r in failures:
            out += [
                "",
                f"{r.key}  {r.level.value}  {r.section}  {r.check.title}",
                textwrap.indent(r.message, "  "),
            ]
            cited = r.check.citation(r.version)
            if cited.quote:  # what the version's own text says (0.3's words for a 0.3 run)
                out.append(f"  {r.version} {cited.render()}")
            for ex in r.evidence[-3:]:
                out.append(textwrap.indent(ex.render(), "    "))
    return "\n".join(out) + "\n"


def render_json(report: SuiteReport) -> str:
    t = report.target
    doc = {
        "target": {
            "url": t.url,
            "cardUrl": t.card_url,
            "cardProblem": t.card_problem,
            "endpoints": [
                {
                    "version": e.version,
                    "transport": e.transport,
                    "url": e.url,
                    "declaredUrl": e.declared_url,
                    "tenant": e.tenant,
                    "source": e.source,
                }
                for e in t.endpoints
            ],
        },
        "versions": report.versions,
        "transports": report.transports,
        "startedAt": report.started_at,
        "duration": round(report.duration, 4),
        "notes": report.notes,
        "summary": {
            **report.counts(),
            "failedMust": len(report.failed_must),
            "exitCode": report.exit_code,
        },
        "results": [r.to_dict() for r in report.results],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_junit(report: SuiteReport) -> str:
    """JUnit XML: one <testsuite> per (version, transport), one <testcase> per check."""
    root = ET.Element("testsuites", name="a2a-conformance", time=f"{report.duration:.3f}")
    groups: dict[str, list[CheckResult]] = {}
    for r in report.results:
        groups.setdefault(f"{r.version}-{r.transport}", []).append(r)
    for name, results in groups.items():
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"a2a-conformance.{name}",
            tests=str(len(results)),
            failures=str(sum(r.status is Status.FAIL for r in results)),
            errors="0",
            skipped=str(sum(r.status in (Status.SKIP, Status.NOT_APPLICABLE) for r in results)),
            time=f"{sum(r.duration for r in results):.3f}",
            timestamp=report.started_at,
        )
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="target", value=report.target.url)
        for r in results:
            case = ET.SubElement(
                suite,
                "testcase",
                name=r.id,
                classname=f"a2a_conformance.{name.replace('.', '_')}",
                time=f"{r.duration:.3f}",
            )
            cprops = ET.SubElement(case, "properties")
            ET.SubElement(cprops, "property", name="section", value=r.section)
            ET.SubElement(cprops, "property", name="level", value=r.level.value)
            for req in r.requirements:
                ET.SubElement(cprops, "property", name="requirement", value=req)
            if r.status is Status.FAIL:
                text = "\n\n".join(ex.render() for ex in r.evidence[-3:])
                fail = ET.SubElement(
                    case,
                    "failure",
                    message=f"[{r.level.value} {r.section}] {r.message}",
                    type=r.level.value,
                )
                fail.text = text
            elif r.status in (Status.SKIP, Status.NOT_APPLICABLE):
                ET.SubElement(case, "skipped", message=f"{r.status.value}: {r.message}")
            if r.message and r.status is Status.PASS:
                ET.SubElement(case, "system-out").text = r.message
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _section_key(section: str) -> tuple[int, ...]:
    match = re.search(r"(\d+(?:\.\d+)*)", section)
    return tuple(int(p) for p in match.group(1).split(".")) if match else (999,)


def _main_section(section: str) -> str:
    """``§3.1.4, §3.3.2`` → ``§3.1.4``; ``0.3 §7.2.2`` stays as it is."""
    return section.split(",")[0].split(" (")[0].strip()


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%}td,th{padding:.25em .5em;text-align:left;
vertical-align:top;border-bottom:1px solid #eee}.pass{color:#176f2c}.fail{color:#b00020;
font-weight:600}.skip,.not-applicable{color:#777}pre{background:#f6f6f6;padding:.6em;
overflow:auto;white-space:pre-wrap;word-break:break-all;font-size:12px}
.sum span{display:inline-block;margin-right:1.2em}details{margin:.3em 0 .8em}
.req{color:#555;font-size:12px}
"""


def render_html(report: SuiteReport) -> str:
    """One self-contained HTML page: per-section results and each failure's evidence."""
    from ._catalogue import requirements

    sentences = {r.id: r for r in requirements()}
    esc = html.escape
    t = report.target
    counts = report.counts()
    verdict = (
        "NOT CONFORMANT (a MUST check failed)"
        if report.exit_code
        else "conformant (no MUST check failed)"
    )
    out = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>A2A conformance: {esc(t.url)}</title><style>{_CSS}</style></head><body>",
        f"<h1>A2A conformance report</h1><p>Target <code>{esc(t.url)}</code>, card "
        f"<code>{esc(t.card_url)}</code>; versions {esc(', '.join(report.versions))}; "
        f"transports {esc(', '.join(report.transports))}; started {esc(report.started_at)}, "
        f"{report.duration:.2f}s.</p>",
        "<p class='sum'>"
        + "".join(f"<span class='{k}'>{v} {k}</span>" for k, v in counts.items())
        + f"</p><p><b>{esc(verdict)}</b></p>",
    ]
    out += [f"<p>note: {esc(n)}</p>" for n in report.notes]
    groups: dict[str, list[CheckResult]] = {}
    for r in report.results:
        groups.setdefault(_main_section(r.section), []).append(r)
    for section in sorted(groups, key=_section_key):
        results = groups[section]
        failed = sum(r.status is Status.FAIL for r in results)
        out.append(
            f"<h2>{esc(section)} <small>({len(results)} results, {failed} failed)"
            "</small></h2><table><tr><th>status</th><th>level</th><th>check</th>"
            "<th>where</th><th>message</th></tr>"
        )
        for r in results:
            out.append(
                f"<tr><td class='{r.status.value}'>{r.status.value}</td>"
                f"<td>{r.level.value}</td><td title='{esc(r.check.title)}'>"
                f"{esc(r.id)}</td><td>{esc(r.key[len(r.id) :])}</td>"
                f"<td>{esc(r.message[:300])}</td></tr>"
            )
        out.append("</table>")
        for r in results:
            if r.status is not Status.FAIL:
                continue
            out.append(
                f"<details open><summary><b class='fail'>{esc(r.key)}</b> "
                f"{esc(r.check.title)} ({esc(r.section)})</summary>"
            )
            out.append(f"<p>{esc(r.message)}</p>")
            for req in r.requirements:
                sr = sentences.get(req)
                if sr is not None:
                    out.append(
                        f"<p class='req'>{esc(req)} ({esc(sr.keyword)}, §{esc(sr.section)}):"
                        f" {esc(sr.sentence)}</p>"
                    )
            for ex in r.evidence[-4:]:
                out.append(f"<pre>{esc(ex.render())}</pre>")
            out.append("</details>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


FORMATS = {"text": render_text, "json": render_json, "junit": render_junit, "html": render_html}


def render(report: SuiteReport, fmt: str) -> str:
    if fmt == "text":
        return render_text(report)
    return FORMATS[fmt](report)
