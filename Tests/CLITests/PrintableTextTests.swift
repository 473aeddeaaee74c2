import Foundation
import Testing

@testable import FetchChannelCLI

/// Backend text on its way to a terminal: control characters, escape sequences first, are shown
/// as `?`; line feeds and tabs stay.
@Suite struct PrintableTextTests {
    @Test(arguments: [
        ("tok\u{1B}[31mRED", "tok?[31mRED"),
        ("bell\u{07} and C1 \u{9B}2J", "bell? and C1 ?2J"),
        ("line one\nline two\tend", "line one\nline two\tend"),
        ("carriage\rreturn, delete\u{7F}", "carriage?return, delete?"),
        ("plain ASCII and é", "plain ASCII and é"),
        // Bidirectional overrides and isolates would show `evil.example` as `elpmaxe.live`.
        ("https://\u{202E}elpmaxe.live\u{202C}/r", "https://?elpmaxe.live?/r"),
        ("\u{2066}a\u{2069} \u{200F}b \u{061C}c", "?a? ?b ?c"),
        ("line\u{2028}para\u{2029}end", "line?para?end"),
        ("emoji 👩‍💻 keep their joiner", "emoji 👩‍💻 keep their joiner"),
    ])
    func controlCharactersAreReplaced(text: String, shown: String) {
        #expect(PrintableText.of(text) == shown)
    }

    /// A value shown on one line loses its line feeds and tabs too: it cannot fake the next row.
    @Test func aOneLineValueHasNoLineBreaks() {
        #expect(PrintableText.oneLine("t1\nfake-key  2026-01-01\tx\u{1B}") == "t1?fake-key  2026-01-01?x?")
    }
}

/// `--json` output carries a backend's text: what a terminal would act on is written escaped.
@Suite struct JSONOutputEscapingTests {
    @Test func terminalControlsInStringsAreEscapedAndReadBackTheSame() throws {
        let value = "a\u{9B}2J \u{202E}b \u{2028}c é 👩‍💻 \u{1B}"
        let text = try JSONOutput.text(["t": value])
        #expect(text == #"{"t":"a\u009b2J \u202eb \u2028c é 👩‍💻 \u001b"}"#, "\(text)")
        let back = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String])
        #expect(back["t"] == value)
    }
}
