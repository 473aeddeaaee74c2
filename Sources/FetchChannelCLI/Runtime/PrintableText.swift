/// Text from outside (a backend's answer, an error excerpt, a stored record) as it may reach a
/// terminal: every control character but line feed and tab becomes `?`. An escape sequence in a
/// token or an error body would otherwise recolour, move or retitle the user's terminal. So do
/// the bidirectional formatting characters (which reorder what follows them on screen: a token or
/// URL shown other than it is) and the line and paragraph separators.
enum PrintableText {
    static func of(_ text: some StringProtocol) -> String {
        replacing(text) { $0 != "\n" && $0 != "\t" }
    }

    /// The same for a value shown on one line (a table cell, a field of `key show`): line feeds
    /// and tabs become `?` too, so that a value cannot fake the rows after it.
    static func oneLine(_ text: some StringProtocol) -> String {
        replacing(text) { _ in true }
    }

    /// A line or paragraph separator, or a bidirectional control: not a control character, but
    /// something a terminal acts on (a break, a reordering). `JSONOutput` escapes these too.
    static func isLayoutControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .lineSeparator, .paragraphSeparator: true
        default: scalar.properties.isBidiControl
        }
    }

    /// `text` with each control character for which `isReplaced` holds, and each layout control,
    /// shown as `?`.
    private static func replacing(_ text: some StringProtocol, _ isReplaced: (Unicode.Scalar) -> Bool) -> String {
        func replaced(_ scalar: Unicode.Scalar) -> Bool {
            scalar.properties.generalCategory == .control ? isReplaced(scalar) : isLayoutControl(scalar)
        }
        guard text.unicodeScalars.contains(where: replaced) else { return String(text) }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { replaced($0) ? "?" : $0 }))
    }
}
