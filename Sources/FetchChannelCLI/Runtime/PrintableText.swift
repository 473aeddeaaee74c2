/// Text from outside (a backend's answer, an error excerpt, a stored record) as it may reach a
/// terminal: every control character but line feed and tab becomes `?`. An escape sequence in a
/// token or an error body would otherwise recolour, move or retitle the user's terminal.
enum PrintableText {
    static func of(_ text: some StringProtocol) -> String {
        guard text.unicodeScalars.contains(where: isReplaced) else { return String(text) }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isReplaced($0) ? "?" : $0 }))
    }

    private static func isReplaced(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control && scalar != "\n" && scalar != "\t"
    }
}
