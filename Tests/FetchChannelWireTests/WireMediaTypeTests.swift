import FetchChannelWire
import Testing

@Suite("Content-Type matching")
struct WireMediaTypeTests {
    @Test(
        "JSON: application/json or application/…+json, any case, parameters and blanks ignored",
        arguments: [
            ("application/json", true), ("application/json;charset=UTF-8", true),
            ("Application/JSON; charset=utf-8", true), (" \tapplication/json \t; q=1", true),
            ("application/problem+json", true), ("APPLICATION/VND.X+JSON", true),
            // Blanks other than space and tab are not trimmed: a type padded with them is none.
            ("\u{A0}application/json", false), ("\u{3000}application/json; charset=utf-8", false),
            ("application/+json", false), ("application/jsonx", false), ("text/json", false),
            ("application/jose", false), ("application/ json", false), ("", false), (";application/json", false),
            ("application/jsön", false),
            // Two values of a repeated field joined by ", ", and subtypes that are not tokens.
            ("application/xml, application/problem+json", false), ("application/ +json", false),
            ("application/a b+json", false), ("application/a\u{A0}b+json", false),
        ])
    func json(contentType: String, isJSON: Bool) {
        #expect(WireMediaType.isJSON(contentType) == isJSON)
    }

    @Test(
        "JOSE: application/jose, any case, parameters and blanks ignored",
        arguments: [
            ("application/jose", true), ("application/jose;charset=UTF-8", true), ("APPLICATION/Jose ;x=y", true),
            ("\tapplication/jose", true), ("application/jose+json", false), ("application/josex", false),
            ("application/json", false), ("", false), ("application/jos", false),
            ("application/jose\u{3000}", false), ("\u{A0}application/jose", false),
        ])
    func jose(contentType: String, isJOSE: Bool) {
        #expect(WireMediaType.isJOSE(contentType) == isJOSE)
    }

    @Test(
        "JOSE in its JSON serialization: application/jose+json",
        arguments: [
            ("application/jose+json", true), ("Application/JOSE+JSON; charset=utf-8", true),
            ("application/jose", false), ("application/json", false), ("\u{A0}application/jose+json", false),
        ])
    func joseJSON(contentType: String, isJOSEJSON: Bool) {
        #expect(WireMediaType.isJOSEJSON(contentType) == isJOSEJSON)
    }
}
