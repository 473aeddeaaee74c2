/// Text a backend sent (a redeem URL, a Content-Type), made fit to quote inside a one-line error
/// message: at most `maximumScalars` Unicode scalars (a grapheme of thousands of combining marks
/// counts as thousands), with every control character (line feeds and escapes included) and
/// every format character (bidirectional overrides) shown as `?`, so that no backend can write
/// lines of its own into a log or terminal, or reorder what follows.
enum QuotedText {
    static func shown(_ text: some StringProtocol, maximumScalars: Int = 100) -> String {
        var shown = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars {
            guard count < maximumScalars else {
                shown.append("…")
                break
            }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator: shown.append("?")
            default: shown.append(scalar)
            }
            count += 1
        }
        return String(shown)
    }
}
