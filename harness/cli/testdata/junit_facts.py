#!/usr/bin/env python3
"""An independent reading of a JUnit XML file for ingest_real_tools_e2e_test: every
<testcase> in document order with its nearest <testsuite name>, attributes, the
<failure>/<error>/<skipped> children (kind, message, text) and its captured output, as JSON
on stdout. Python's xml.etree, not the harness's libxml2 reader.

  junit_facts.py FILE.xml
"""
import json
import sys
import xml.etree.ElementTree as ET


def walk(node, suite, out):
    for child in node:
        if child.tag == "testsuite":
            walk(child, child.get("name") or suite, out)
        elif child.tag == "testcase":
            elements, output = [], ""
            for k in child:
                if k.tag in ("failure", "error", "skipped"):
                    elements.append({"kind": k.tag, "message": k.get("message", ""), "text": k.text or ""})
                elif k.tag in ("system-out", "system-err") and k.text:
                    output += ("" if not output or output.endswith("\n") else "\n") + k.text
            out.append({
                "suite": suite,
                "classname": child.get("classname", ""),
                "name": child.get("name"),
                "time": float(child.get("time", "0")),
                "status": child.get("status", ""),
                "result": child.get("result", ""),
                "elements": elements,
                "output": output,
            })


def main():
    root = ET.parse(sys.argv[1]).getroot()
    cases = []
    if root.tag == "testsuite":
        walk([root], "", cases)
    else:
        walk(root, "", cases)
    json.dump({"root": root.tag, "root_name": root.get("name", ""), "cases": cases}, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
