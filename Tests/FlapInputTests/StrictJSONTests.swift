import Testing
import FlapInput

@Suite struct StrictJSONTests {
    func problem(_ text: String, _ limits: JSONLimits = JSONLimits()) -> String? {
        problem(Array(text.utf8), limits)
    }

    func problem(_ bytes: [UInt8], _ limits: JSONLimits = JSONLimits()) -> String? {
        do { try StrictJSON.check(bytes, limits: limits); return nil } catch { return error.reason }
    }

    @Test func takesWhatRFC8259Writes() {
        for good in ["[]", "{}", " [[1,2],[3]] ", #"{"text":"x"}"#, #"{"a":{"b":[true,false,null,-0.5e+3,"\u00e9\ud83d\ude00\n"]}}"#,
                     "0", "\"é\"", "1E5", "-0", #"{"a":1,"b":2}"#] {
            #expect(problem(good) == nil, "\(good)")
        }
    }

    /// The finding of issue 18: a body whose nesting reaches 513 at its last byte crashed
    /// Foundation's decoder; the check stops at the limit, never recursing past it.
    @Test func refusesDeepNestingAtTheLimitAndBeyond() {
        for text in [String(repeating: "[", count: 513), " " + String(repeating: "[", count: 513),
                     #"{"text":"# + String(repeating: "[", count: 512), String(repeating: #"[{"a":"#, count: 256) + "[",
                     String(repeating: "[", count: 100_000)] {
            #expect(problem(text, JSONLimits(maxBytes: 1 << 20)) == "nested deeper than 16 levels")
        }
        #expect(problem(String(repeating: "[", count: 16) + String(repeating: "]", count: 16)) == nil)
        #expect(problem(String(repeating: "[", count: 17) + String(repeating: "]", count: 17)) == "nested deeper than 16 levels")
    }

    @Test func refusesWhatLenientDecodersTake() {
        #expect(problem(#"{"text": "x",}"#) == "a trailing comma is not JSON")
        #expect(problem("[[1,2,],]") == "a trailing comma is not JSON")
        #expect(problem("[1e-400]") == "a number too small for a double (it would read as 0)")
        #expect(problem("[1e400]") == "a number too large for a double")
        #expect(problem("[0e-400]") == nil)
        #expect(problem("[01]") == "a number with a leading zero is not JSON")
        #expect(problem("[NaN]") == "expected a value, found 'N'")
        #expect(problem("[.5]") == "expected a value, found '.'")
        #expect(problem(#"{"a":1,"a":2}"#) == "duplicate key")
        #expect(problem(#"{"a":1,"\u0061":2}"#) == "duplicate key")
        #expect(problem("[1] [2]") == "unexpected '[' after the JSON value")
        #expect(problem("// c\n[]") == "expected a value, found '/'")
        #expect(problem("{'a':1}") == "expected a key in double quotes, found '''")
        #expect(problem(#"["\ud800"]"#) == "a lone surrogate \\u escape")
        #expect(problem(#"["\udc00x"]"#) == "a lone surrogate \\u escape")
        #expect(problem(#"["\x"]"#) == "unknown escape \\'x'")
        #expect(problem("[\"a\tb\"]") == "a control character (byte 0x9) in a string must be escaped")
        #expect(problem("") == "no JSON value")
        #expect(problem("[") == "unterminated array")
        #expect(problem("[1") == "unterminated array: expected ',' or ']'")
        #expect(problem(#"{"a""#) == "expected ':' after the key")
        #expect(problem("[tru]") == "expected true")
        #expect(problem([0xEF, 0xBB, 0xBF, 0x5B, 0x5D]) == "a byte-order mark is not JSON")
    }

    @Test func refusesWhatIsNotUTF8() {
        #expect(problem([0x22, 0xC0, 0xAF, 0x22]) == "not UTF-8 (byte 0xC0)")          // overlong '/'
        #expect(problem([0x22, 0xED, 0xA0, 0x80, 0x22]) == "not UTF-8 (byte 0xED)")    // a surrogate
        #expect(problem([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22]) == "not UTF-8 (byte 0xF4)") // past U+10FFFF
        #expect(problem([0x22, 0xE2, 0x82, 0x22]) == "not UTF-8 (byte 0xE2)")          // cut short
        #expect(problem([0x5B, 0xFF, 0x5D]) == "expected a value, found byte 0xFF")
    }

    @Test func limitsSizeValuesAndNumbers() {
        let small = JSONLimits(maxBytes: 10, maxDepth: 4, maxValues: 3, maxNumberBytes: 5)
        #expect(problem("[1,2,3,4,5]", small) == "input is larger than 10 bytes")
        #expect(problem("[1,2,3]", small) == "more than 3 values")
        #expect(problem("[123456]", small) == "a number longer than 5 characters")
    }

    @Test func namesLineAndColumn() throws {
        do {
            try StrictJSON.check(Array("{\n  \"é\": [1,\n  2,]}".utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.line == 3 && error.column == 5)
            #expect(error.description == "a trailing comma is not JSON at line 3, column 5 (byte 18)")
        }
    }
}
