/// PEM armour (RFC 7468, strict form): one `-----BEGIN LABEL-----` line, base64 in lines of at
/// most 64 characters, one `-----END LABEL-----` line. Headers (RFC 1421 `Proc-Type`) are refused.
enum PEM {
    static let maximumLength = 64 * 1024

    struct Document {
        let label: String
        let der: [UInt8]
    }

    static func encode<Bytes: Collection>(label: String, der: Bytes) -> String where Bytes.Element == UInt8 {
        let body = Base64.encodeToBytes(der, alphabet: .standard)
        var output = "-----BEGIN \(label)-----\n"
        var index = 0
        while index < body.count {
            let end = Swift.min(index + 64, body.count)
            output += String(decoding: body[index..<end], as: UTF8.self)
            output += "\n"
            index = end
        }
        output += "-----END \(label)-----\n"
        return output
    }

    /// The first PEM block of `text`. Text around the block (comments) is ignored, as OpenSSL does.
    static func decode(_ text: String) throws -> Document {
        guard text.utf8.count <= maximumLength else {
            throw DeviceSigningError(.inputTooLarge, "A PEM document is at most \(maximumLength) bytes.")
        }
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" })
            .map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        guard let beginIndex = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("-----") }) else {
            throw DeviceSigningError(.malformedEncoding, "No PEM block (-----BEGIN ...-----) found.")
        }
        let beginLine = lines[beginIndex]
        let label = String(beginLine.dropFirst("-----BEGIN ".count).dropLast("-----".count))
        let endLine = "-----END \(label)-----"
        guard let endIndex = lines[(beginIndex + 1)...].firstIndex(where: { $0 == endLine }) else {
            throw DeviceSigningError(.malformedEncoding, "The PEM block \(label) has no matching END line.")
        }
        var base64: [UInt8] = []
        for line in lines[(beginIndex + 1)..<endIndex] {
            let trimmed = line.trimmingSuffixWhitespace()
            guard !trimmed.contains(":") else {
                throw DeviceSigningError(.malformedEncoding, "PEM headers (legacy encrypted PEM) are not supported; convert the key to PKCS#8 (openssl pkcs8 -topk8).")
            }
            base64.append(contentsOf: trimmed.utf8)
        }
        guard let der = Base64.decode(base64, alphabet: .standard), !der.isEmpty else {
            throw DeviceSigningError(.malformedEncoding, "The PEM block \(label) does not hold valid base64.")
        }
        return Document(label: label, der: der)
    }
}

private extension Substring {
    func trimmingSuffixWhitespace() -> Substring {
        var result = self
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
