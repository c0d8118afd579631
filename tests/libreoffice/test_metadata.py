#!/usr/bin/env python3
"""Checks that everything built from the function table (addin/functions.py)
says the same thing: the IDL, the type library compiled from it (read back
with unoidl-read), CalcAddIns.xcu, statgpu.components and the C++ table
header. They are generated, so this guards the generator and the build, not
hand edits.

    test_metadata.py --source-dir . --idl ... --rdb ... --xcu ... --header ...
                     --components ... --unoidl-read .../unoidl-read

Prints one line per check and 'N passed, M failed'; exits 1 on a failure.
"""

import argparse
import ast
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

OOR = "{http://openoffice.org/2001/registry}"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
COMPONENTS = "{http://openoffice.org/2010/uno-components}"


class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, expected, actual):
        ok = expected == actual
        self.passed += ok
        self.failed += not ok
        print("%s  %s" % ("ok  " if ok else "FAIL", name))
        if not ok:
            print("      expected %r\n      found    %r" % (expected, actual))


def normalise_type(text):
    return re.sub(r"\s+", "", text).replace("::com::sun::star::", "com::sun::star::")


def signatures_from_idl(text):
    """{method: (return type, [(type, name)])} of the interface in IDL text."""
    methods = {}
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.DOTALL)
    pattern = r"^\s*(\w[\w:<> ]*?)\s+(\w+)\s*\(([^)]*)\)"
    for returns, method, parameters in re.findall(pattern, text, re.MULTILINE):
        if returns.strip() in ("interface", "module"):
            continue
        arguments = []
        for parameter in filter(None, (p.strip() for p in parameters.split(","))):
            match = re.match(r"\[in\]\s+(.+)\s+(\w+)$", parameter)
            arguments.append((normalise_type(match.group(1)), match.group(2)))
        methods[method] = (normalise_type(returns), arguments)
    return methods


def node(parent, name):
    for child in parent.findall("node"):
        if child.get(OOR + "name") == name:
            return child
    return None


def prop(parent, name):
    for child in parent.findall("prop"):
        if child.get(OOR + "name") == name:
            value = child.find("value")
            return (value.text or "", value.get(XML_LANG))
    return None


def unescape_cxx(text):
    return ast.literal_eval('"%s"' % text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for option in ("--source-dir", "--idl", "--rdb", "--xcu", "--header", "--components", "--unoidl-read"):
        parser.add_argument(option, required=True)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.source_dir, "addin"))
    import functions as table

    results = Results()
    expected = {f.method: (normalise_type(f.returns), [(normalise_type(a.type), a.name) for a in f.arguments])
                for f in table.FUNCTIONS}

    with open(args.idl, encoding="utf-8") as idl:
        results.check("IDL declares the table's methods and arguments", expected, signatures_from_idl(idl.read()))

    read_back = subprocess.run([args.unoidl_read, args.rdb], check=True, capture_output=True, text=True).stdout
    results.check("type library (unoidl-read) holds the table's methods and arguments",
                  expected, signatures_from_idl(read_back))
    results.check("type library names the interface %s.%s" % (table.MODULE, table.INTERFACE), True,
                  all("module %s" % part in read_back for part in table.MODULE.split("."))
                  and "interface %s" % table.INTERFACE in read_back)

    root = ElementTree.parse(args.xcu).getroot()
    service = node(node(root, "AddInInfo"), table.SERVICE_NAME)
    results.check("CalcAddIns.xcu files the functions under %s" % table.SERVICE_NAME, True, service is not None)
    functions_node = node(service, "AddInFunctions") if service is not None else None
    found = {}
    for function in (functions_node.findall("node") if functions_node is not None else []):
        parameters = node(function, "Parameters")
        found[function.get(OOR + "name")] = (
            prop(function, "DisplayName"), prop(function, "Description"), prop(function, "Category"),
            [(p.get(OOR + "name"), prop(p, "DisplayName"), prop(p, "Description"))
             for p in parameters.findall("node")])
    results.check("CalcAddIns.xcu has the table's names, descriptions, category and arguments",
                  {f.method: ((f.display, "en-US"), (f.description, "en-US"), (table.CATEGORY, None),
                              [(a.name, (a.display, "en-US"), (a.description, "en-US")) for a in f.arguments])
                   for f in table.FUNCTIONS},
                  found)

    with open(args.header, encoding="utf-8") as header:
        text = header.read()
    string = r'"((?:[^"\\]|\\.)*)"'
    rows = re.findall(r"\{%s, %s,\s*%s,\s*(\w+), (\d+)\}" % (string, string, string), text)
    arrays = {name: re.findall(r"\{%s, %s, %s\}" % (string, string, string), body)
              for name, body in re.findall(r"ArgumentInfo (\w+)\[\] = \{(.*?)\n\};", text, re.DOTALL)}
    header_table = [(unescape_cxx(m), unescape_cxx(d), unescape_cxx(t), int(count),
                     [tuple(unescape_cxx(x) for x in argument) for argument in arrays.get(array, [])])
                    for m, d, t, array, count in rows]
    results.check("C++ table header has the table's functions and arguments",
                  [(f.method, f.display, f.description, len(f.arguments),
                    [(a.name, a.display, a.description) for a in f.arguments]) for f in table.FUNCTIONS],
                  header_table)
    results.check("C++ table header has the service, implementation and category",
                  [table.SERVICE_NAME, table.IMPLEMENTATION_NAME, table.CATEGORY],
                  [unescape_cxx(re.search(r"%s\[\] = %s;" % (name, string), text).group(1))
                   for name in ("kServiceName", "kImplementationName", "kCategory")])

    components = ElementTree.parse(args.components).getroot()
    implementation = components.find("%scomponent/%simplementation" % (COMPONENTS, COMPONENTS))
    results.check("statgpu.components registers the implementation for the add-in services",
                  (table.IMPLEMENTATION_NAME, ["com.sun.star.sheet.AddIn", table.SERVICE_NAME]),
                  (implementation.get("name"),
                   [s.get("name") for s in implementation.findall(COMPONENTS + "service")]))

    print("%d passed, %d failed" % (results.passed, results.failed))
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
