import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { memberNames, nestingDepth, rawMemberText, withoutSpace } from "../../src/lib/raw-json.ts";

describe("rawMemberText", () => {
  test("returns the exact source text of the member's value", () => {
    const doc = `{"amount":"25.00","metadata":{ "b" : "1",  "2":"two" },"description":"x"}`;
    expect(rawMemberText(doc, "metadata")).toBe(`{ "b" : "1",  "2":"two" }`);
    expect(rawMemberText(doc, "amount")).toBe(`"25.00"`);
    expect(rawMemberText(doc, "description")).toBe(`"x"`);
  });

  test("an absent member is null", () => {
    expect(rawMemberText(`{"amount":"25.00"}`, "metadata")).toBeNull();
    expect(rawMemberText(`{}`, "metadata")).toBeNull();
    expect(rawMemberText(` { } `, "metadata")).toBeNull();
  });

  test("a document that is not an object is null", () => {
    expect(rawMemberText(`[{"metadata":{}}]`, "metadata")).toBeNull();
    expect(rawMemberText(`"metadata"`, "metadata")).toBeNull();
    expect(rawMemberText(`null`, "metadata")).toBeNull();
  });

  test("only top-level members count, not nested ones of the same name", () => {
    const doc = `{"line_items":[{"metadata":{"nested":"1"}}],"x":{"metadata":"no"}}`;
    expect(rawMemberText(doc, "metadata")).toBeNull();
    const withTop = `{"x":{"metadata":"no"},"metadata":{"top":"yes"}}`;
    expect(rawMemberText(withTop, "metadata")).toBe(`{"top":"yes"}`);
  });

  test("strings holding braces, brackets, quotes and escapes do not confuse it", () => {
    const value = String.raw`{"a":"}","b":"]","c":"\"}","d":"\\","e":"\\\"{[","f":"\u007d"}`;
    const doc = String.raw`{"before":"{[\"","metadata":${value},"after":"]}"}`;
    expect(JSON.parse(doc).metadata.e).toBe('\\"{['); // the fixture is valid JSON
    expect(rawMemberText(doc, "metadata")).toBe(value);
  });

  test("whitespace of every JSON kind around keys, colons and values", () => {
    const doc = `\n\t{\r\n "metadata"\t:\n {"k":"v"}\r\n ,\t"z" : 1 }\n`;
    expect(rawMemberText(doc, "metadata")).toBe(`{"k":"v"}`);
  });

  test("scalars: numbers, true, false, null", () => {
    const doc = `{"n":-1.5e+3,"t":true,"f":false,"z":null,"last":0}`;
    expect(rawMemberText(doc, "n")).toBe("-1.5e+3");
    expect(rawMemberText(doc, "t")).toBe("true");
    expect(rawMemberText(doc, "f")).toBe("false");
    expect(rawMemberText(doc, "z")).toBe("null");
    expect(rawMemberText(doc, "last")).toBe("0");
  });

  test("a key written with escapes matches its decoded name, as JSON.parse reads it", () => {
    expect(rawMemberText(`{"met\\u0061data":{"k":"v"}}`, "metadata")).toBe(`{"k":"v"}`);
  });

  test("a duplicated key yields its last value, as JSON.parse does", () => {
    const doc = `{"metadata":{"first":"1"},"metadata":{"second":"2"}}`;
    expect(rawMemberText(doc, "metadata")).toBe(`{"second":"2"}`);
    expect(JSON.parse(rawMemberText(doc, "metadata")!)).toEqual(JSON.parse(doc).metadata);
  });

  test("property: any JSON value, spliced with any spacing, comes back byte for byte", () => {
    const space = fc.stringMatching(/^[ \t\n\r]{0,3}$/);
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.integer({ min: 0, max: 4 }),
        fc.jsonValue(),
        fc.jsonValue(),
        space,
        space,
        space,
        (value, indent, before, after, s1, s2, s3) => {
          const text = JSON.stringify(value, null, indent);
          const doc = `${s1}{${s2}"before":${JSON.stringify(before)},${s3}"metadata"${s1}:${s2}${text}${s3},"after":${JSON.stringify(after, null, indent)}${s1}}${s2}`;
          JSON.parse(doc); // the fixture is valid JSON
          expect(rawMemberText(doc, "metadata")).toBe(text);
          expect(rawMemberText(doc, "before")).toBe(JSON.stringify(before));
        },
      ),
      { numRuns: 1_000 },
    );
  });

  test("property: agrees with JSON.parse on which value a key has", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue(), { maxKeys: 6 }),
        fc.string({ maxLength: 5 }),
        (object, key) => {
          const doc = JSON.stringify(object);
          const raw = rawMemberText(doc, key);
          if (Object.hasOwn(object, key)) expect(JSON.parse(raw!)).toEqual(JSON.parse(JSON.stringify(object[key])));
          else expect(raw).toBeNull();
        },
      ),
      { numRuns: 1_000 },
    );
  });
});

describe("withoutSpace / memberNames / nestingDepth", () => {
  test("property: any JSON value, indented any way, loses exactly its whitespace between tokens", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 4 }), (value, indent) => {
        expect(withoutSpace(JSON.stringify(value, null, indent))).toBe(JSON.stringify(value));
      }),
      { numRuns: 1_000 },
    );
  });

  test("whitespace and escapes inside strings are kept", () => {
    expect(withoutSpace(`{ "a b" : " x\\" \\t y " }`)).toBe(`{"a b":" x\\" \\t y "}`);
  });

  test("member names are decoded and duplicates listed", () => {
    expect(memberNames(`{ "a":"1", "\\u0061" : {"a":"x"}, "b":[1,{"c":2}] }`)).toEqual(["a", "a", "b"]);
    expect(memberNames(`{}`)).toEqual([]);
  });

  test("nesting depth ignores brackets inside strings", () => {
    expect(nestingDepth(`{"a":[[1]],"b":"[[[[{{{"}`)).toBe(3);
    expect(nestingDepth(`"x"`)).toBe(0);
  });
});
