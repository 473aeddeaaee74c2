/// PEM armour (RFC 7468): one `-----BEGIN LABEL-----` line, the base64 body, one
/// `-----END LABEL-----` line. Headers (RFC 1421 `Proc-Type`) are refused. Written in lines of 64
/// characters (the strict form); read in lines of any length, as OpenSSL reads them.
///
/// There is one parser, `decodeSecret`, which reads the text in place and keeps every copy of the
/// base64 body and of the DER zeroed or in `SecureBytes`; `decode(_:)` is that parser for public
/// material. Likewise one writer, `encodeSecret`, which writes the text straight into
/// `SecureBytes`; `encode` is that writer for public material.
enum PEM {
    static let maximumLength = 64 * 1024

    struct Document {
        let label: String
        let der: [UInt8]
    }

    /// The PEM text of public `der`.
    static func encode<Bytes: Collection>(label: String, der: Bytes) -> String where Bytes.Element == UInt8 {
        let text = Array(der).withUnsafeBytes { encodeSecret(label: label, der: $0) }
        return text.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The PEM text of secret `der` (an unencrypted private key), written directly into
    /// `SecureBytes`: no String, no intermediate base64 copy, so nothing is left unzeroed.
    static func encodeSecret(label: String, der: UnsafeRawBufferPointer) -> SecureBytes {
        let begin = Array("-----BEGIN \(label)-----\n".utf8)
        let end = Array("-----END \(label)-----\n".utf8)
        let bodyCount = Base64.encodedCount(der.count, alphabet: .standard)
        let lines = (bodyCount + 63) / 64
        return SecureBytes(count: begin.count + bodyCount + lines + end.count) { output in
            var offset = 0
            func put(_ bytes: [UInt8]) {
                UnsafeMutableRawBufferPointer(rebasing: output[offset..<(offset + bytes.count)]).copyBytes(from: bytes)
                offset += bytes.count
            }
            put(begin)
            // 48 bytes of DER are exactly one 64-character line; only the last line is shorter.
            var start = 0
            while start < der.count {
                let chunk = UnsafeRawBufferPointer(rebasing: der[start..<Swift.min(start + 48, der.count)])
                let line = UnsafeMutableRawBufferPointer(rebasing: output[offset...])
                offset += Base64.encode(chunk, alphabet: .standard, into: line)
                put([UInt8(ascii: "\n")])
                start += 48
            }
            put(end)
        }
    }

    /// The first PEM block of public `text`. Text around the block (comments) is ignored, as OpenSSL does.
    static func decode(_ text: String) throws -> Document {
        guard text.utf8.count <= maximumLength else {
            throw DeviceSigningError(.inputTooLarge, "A PEM document is at most \(maximumLength) bytes.")
        }
        let document = try decodeSecret(SecureBytes(text.utf8))
        return Document(label: document.label, der: document.der.withUnsafeBytes { Array($0) })
    }

    /// A PEM block whose DER may be secret (an unencrypted private key).
    struct SecretDocument {
        let label: String
        let der: SecureBytes
    }

    /// `decode(_:)` for text that may be secret: the same strict RFC 7468 rules, but the text is
    /// read in place from `SecureBytes` and every copy of the base64 body and of the DER is
    /// zeroed or lives in `SecureBytes`. Blocks labelled `EC PARAMETERS` (which
    /// `openssl ecparam -genkey` writes before the key) are skipped; the next block is used.
    static func decodeSecret(_ text: SecureBytes) throws -> SecretDocument {
        guard text.count <= maximumLength else {
            throw DeviceSigningError(.inputTooLarge, "A PEM document is at most \(maximumLength) bytes.")
        }
        return try text.withUnsafeBytes { try decodeSecret(bytes: $0) }
    }

    /// The label of the block that `decodeSecret` reads in `text` (the first one that is not
    /// `EC PARAMETERS`), whether or not that block is whole; nil without a BEGIN line. Nothing
    /// of the body is decoded: what a key file holds is told by it before the key is read.
    static func label(of text: SecureBytes) -> String? {
        guard text.count <= maximumLength else { return nil }
        return text.withUnsafeBytes { bytes in
            let lines = lineRanges(of: bytes)
            var searchFrom = 0
            while let (label, beginIndex) = firstBegin(in: bytes, lines: lines, from: searchFrom) {
                guard label == skippedLabel, let endIndex = end(of: label, in: bytes, lines: lines, after: beginIndex)
                else { return label }
                searchFrom = endIndex + 1
            }
            return nil
        }
    }

    /// What `openssl ecparam -genkey` writes before the key: skipped to the next block.
    private static let skippedLabel = "EC PARAMETERS"

    /// The first `-----BEGIN LABEL-----` line at or after `from`: its label and index.
    private static func firstBegin(
        in bytes: UnsafeRawBufferPointer, lines: [Range<Int>], from: Int
    ) -> (label: String, index: Int)? {
        let beginPrefix = Array("-----BEGIN ".utf8)
        let dashes = Array("-----".utf8)
        guard
            let index = lines[from...].firstIndex(where: { line in
                line.count >= beginPrefix.count + dashes.count
                    && bytes[line].starts(with: beginPrefix) && bytes[line].reversed().starts(with: dashes)
            })
        else { return nil }
        let line = lines[index]
        let label = String(
            decoding: bytes[(line.lowerBound + beginPrefix.count)..<(line.upperBound - dashes.count)], as: UTF8.self)
        return (label, index)
    }

    /// The index of the `-----END LABEL-----` line that closes the block begun at `beginIndex`.
    private static func end(
        of label: String, in bytes: UnsafeRawBufferPointer, lines: [Range<Int>], after beginIndex: Int
    )
        -> Int?
    {
        let endLine = Array("-----END \(label)-----".utf8)
        return lines[(beginIndex + 1)...].firstIndex(where: { bytes[$0].elementsEqual(endLine) })
    }

    private static func decodeSecret(bytes: UnsafeRawBufferPointer) throws -> SecretDocument {
        let lines = lineRanges(of: bytes)
        var searchFrom = 0
        while true {
            guard let (label, beginIndex) = firstBegin(in: bytes, lines: lines, from: searchFrom) else {
                throw DeviceSigningError(.malformedEncoding, "No PEM block (-----BEGIN ...-----) found.")
            }
            guard let endIndex = end(of: label, in: bytes, lines: lines, after: beginIndex) else {
                throw DeviceSigningError(.malformedEncoding, "The PEM block \(label) has no matching END line.")
            }
            if label == skippedLabel {
                searchFrom = endIndex + 1
                continue
            }
            let body = try lines[(beginIndex + 1)..<endIndex].map { line -> Range<Int> in
                var trimmed = line
                while let last = trimmed.last, bytes[last] == UInt8(ascii: " ") || bytes[last] == UInt8(ascii: "\t") {
                    trimmed = trimmed.lowerBound..<(trimmed.upperBound - 1)
                }
                guard !bytes[trimmed].contains(UInt8(ascii: ":")) else {
                    throw DeviceSigningError(
                        .malformedEncoding,
                        "PEM headers (legacy encrypted PEM) are not supported; convert the key to PKCS#8 (openssl pkcs8 -topk8)."
                    )
                }
                return trimmed
            }
            let base64 = SecureBytes(count: body.reduce(0) { $0 + $1.count }) { output in
                var offset = 0
                for line in body {
                    UnsafeMutableRawBufferPointer(rebasing: output[offset..<(offset + line.count)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[line]))
                    offset += line.count
                }
            }
            // Decoded straight into zeroed-on-release memory: a body whose base64 fails the check
            // at the end has been decoded all the same, and an array of it would be freed as it is.
            var valid = false
            let der = base64.withUnsafeBytes { encoded -> SecureBytes? in
                guard let count = Base64.decodedCount(of: encoded, alphabet: .standard) else { return nil }
                return SecureBytes(count: count) { valid = Base64.decodeSecret(encoded, alphabet: .standard, into: $0) }
            }
            guard let der, valid else {
                throw DeviceSigningError(.malformedEncoding, "The PEM block \(label) does not hold valid base64.")
            }
            guard der.count > 0 else {
                throw DeviceSigningError(.malformedEncoding, "The PEM block \(label) is empty.")
            }
            return SecretDocument(label: label, der: der)
        }
    }

    /// The lines of `bytes` as ranges, without their "\n" or "\r\n".
    private static func lineRanges(of bytes: UnsafeRawBufferPointer) -> [Range<Int>] {
        var lines: [Range<Int>] = []
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "\n") {
            let end = index > start && bytes[index - 1] == UInt8(ascii: "\r") ? index - 1 : index
            lines.append(start..<end)
            start = index + 1
        }
        return lines
    }
}
