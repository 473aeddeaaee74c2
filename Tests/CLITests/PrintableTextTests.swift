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
    ])
    func controlCharactersAreReplaced(text: String, shown: String) {
        #expect(PrintableText.of(text) == shown)
    }
}
