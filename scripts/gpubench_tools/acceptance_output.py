"""The acceptance run's verdicts written out: a console summary, markdown, JUnit XML (one test
case per band and GPU, so CI systems show a failed node like a failed test) and JSON."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from .acceptance import FAIL, fmt, NOT_MEASURED, PASS, WARN, GpuVerdict, Verdict, node_verdict
from .output import visible, xml_text


def _value(v: Verdict) -> str:
    return "-" if v.value is None else f"{fmt(v.value)} {v.band.unit}"


def _band(v: Verdict) -> str:
    top = f", max {v.band.max:g}" if v.band.max is not None else ""
    return f"pass >= {v.band.pass_min:g}, warn >= {v.band.warn_min:g}{top} {v.band.unit}"


def _gpu_title(g: GpuVerdict) -> str:
    return f"{g.host} GPU {g.gpu} ({g.device_name})"


def console_lines(gpus: list[GpuVerdict]) -> list[str]:
    """What validate.py prints: per GPU its bands' verdicts and the non-PASS causes, then the
    node's verdict."""
    out = []
    for g in gpus:
        out.append(f"{_gpu_title(g)}: {g.verdict}")
        if g.note:
            out.append(f"  {g.note}")
        out.extend(f"  not judged: {u}" for u in g.unjudged)
        for v in g.verdicts:
            out.append(f"  {v.verdict:<5} {v.what:<36} {_value(v):>14}   ({_band(v)})")
            if v.verdict != PASS:
                out.append(f"        {v.why}")
                out.extend(f"        likely cause: {c}" for c in v.causes)
    out.append(f"node: {node_verdict(gpus)}")
    return [visible(line) for line in out]  # host and device names, paths: from the files


def markdown(gpus: list[GpuVerdict]) -> str:
    """A markdown report: a table per GPU, causes under it, sources of the bands at the end."""
    lines = [f"# gpubench acceptance: {node_verdict(gpus)}", ""]
    sources = {}
    for g in gpus:
        lines += [f"## {_gpu_title(g)}: {g.verdict}", ""]
        if g.note:
            lines += [g.note, ""]
        if g.verdicts:
            lines += ["| check | verdict | measured | band | row |", "|---|---|---|---|---|"]
            for v in g.verdicts:
                lines.append(f"| {v.what} | **{v.verdict}** | {_value(v)} | {_band(v)} | `{v.row or '-'}` |")
                sources[v.what + (f" ({v.band.link})" if v.band.link else "")] = v.band.source
            lines.append("")
            lines += [f"- not judged: {u}" for u in g.unjudged]
            for v in g.verdicts:
                if v.verdict != PASS:
                    lines.append(f"- **{v.what}**: {v.why}")
                    lines += [f"  - likely cause: {c}" for c in v.causes]
            lines.append("")
        lines.append("Result files: " + ", ".join(f"`{f}`" for f in g.files))
        lines.append("")
    if sources:
        lines += ["## Where the bands come from", ""]
        lines += [f"- {what}: {src}" for what, src in sources.items()]
        lines.append("")
    return "\n".join(visible(line) for line in lines)  # (as console_lines')


def junit(gpus: list[GpuVerdict]) -> str:
    """JUnit XML: a test suite per GPU, a test case per band; FAIL and NOT MEASURED are
    failures, WARN passes with its reason in system-out (CI shows it without failing the job, as
    the exit status does), a GPU without bands is one skipped case."""
    suites = ET.Element("testsuites", name="gpubench acceptance")
    for g in gpus:
        suite = ET.SubElement(suites, "testsuite", name=xml_text(_gpu_title(g)))
        cases = g.verdicts or [None]
        failures = skipped = 0
        for v in cases:
            if v is None:
                case = ET.SubElement(suite, "testcase", classname=xml_text(_gpu_title(g)), name="expected bands")
                ET.SubElement(case, "skipped", message=xml_text(g.note))
                skipped += 1
                continue
            case = ET.SubElement(suite, "testcase", classname=xml_text(_gpu_title(g)), name=v.what)
            text = "\n".join([f"{v.verdict}: {v.why}", *[f"likely cause: {c}" for c in v.causes]])
            if v.verdict in (FAIL, NOT_MEASURED):
                failure = ET.SubElement(case, "failure", message=xml_text(v.why))
                failure.text = xml_text(text)
                failures += 1
            elif v.verdict == WARN:
                ET.SubElement(case, "system-out").text = xml_text(text)
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(failures))
        suite.set("skipped", str(skipped))
        suite.set("errors", "0")
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def as_json(gpus: list[GpuVerdict]) -> str:
    """Everything above as JSON: node verdict, per GPU its verdicts with band and source."""
    doc = {
        "node_verdict": node_verdict(gpus),
        "gpus": [{
            "host": g.host, "gpu": g.gpu, "device_name": g.device_name, "card_key": g.card_key,
            "verdict": g.verdict, "note": g.note, "not_judged": g.unjudged, "files": g.files,
            "checks": [{
                "check": v.check, "what": v.what, "verdict": v.verdict, "value": v.value, "unit": v.band.unit,
                "row": v.row, "why": v.why, "likely_causes": v.causes,
                "band": {"pass_min": v.band.pass_min, "warn_min": v.band.warn_min, "max": v.band.max,
                         "reference": v.band.reference, "link": v.band.link, "source": v.band.source},
            } for v in g.verdicts],
        } for g in gpus],
    }
    return json.dumps(doc, indent=2) + "\n"


__all__ = ["console_lines", "markdown", "junit", "as_json", "FAIL", "WARN", "PASS"]
