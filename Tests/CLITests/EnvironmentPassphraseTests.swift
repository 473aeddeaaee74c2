import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelCLI

#if canImport(Glibc)
    import Glibc
#endif

/// FETCHCHANNEL_PASSPHRASE is taken out of the environment as the process starts, into storage
/// that is zeroed when released, and zeroed where it was.
@Suite struct EnvironmentPassphraseTests {
    /// An environment table made of `strdup`ed entries, as `environ` is laid out.
    final class Table {
        let entries: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
        let count: Int

        init(_ lines: [String]) {
            count = lines.count
            entries = .allocate(capacity: lines.count + 1)
            for (index, line) in lines.enumerated() { entries[index] = strdup(line) }
            entries[lines.count] = nil
        }

        /// The bytes of entry `index` as they are now (up to its original length).
        func bytes(_ index: Int, length: Int) -> [UInt8] {
            guard let entry = entries[index] else { return [] }
            return Array(UnsafeRawBufferPointer(start: entry, count: length))
        }

        deinit {
            for index in 0..<count { free(entries[index]) }
            entries.deallocate()
        }
    }

    @Test func itsValueIsCopiedAndZeroedWhereItWas() throws {
        let variable = "FETCHCHANNEL_PASSPHRASE="
        let table = Table(["HOME=/home/device", variable + "correct horse", "TMPDIR=/tmp"])
        let taken = try #require(EnvironmentPassphrase.take(from: table.entries))
        #expect(taken.withUnsafeBytes { Array($0) } == Array("correct horse".utf8))
        let left = table.bytes(1, length: variable.utf8.count + 13)
        #expect(left == Array(variable.utf8) + [UInt8](repeating: 0, count: 13), "the value is zeroed in place")
        #expect(table.bytes(0, length: 17) == Array("HOME=/home/device".utf8), "other entries are left alone")
    }

    @Test(arguments: ["FETCHCHANNEL_PASSPHRASE_OLD=x", "XFETCHCHANNEL_PASSPHRASE=x", "FETCHCHANNEL_PASSPHRASE"])
    func anotherNameIsNotTaken(line: String) {
        let table = Table([line])
        #expect(EnvironmentPassphrase.take(from: table.entries) == nil)
        #expect(table.bytes(0, length: line.utf8.count) == Array(line.utf8))
    }

    @Test func anEmptyValueIsTakenAsEmpty() throws {
        let table = Table(["FETCHCHANNEL_PASSPHRASE="])
        #expect(try #require(EnvironmentPassphrase.take(from: table.entries)).count == 0)
    }

    @Test(arguments: [
        ([UInt8]("pass phrase".utf8), true), ([UInt8]("Grüße, 🔑".utf8), true), ([0xFF, 0x41], false),
        ([0x41, 0xC3], false), ([0xED, 0xA0, 0x80], false),
    ])
    func utf8IsCheckedOnTheBytes(bytes: [UInt8], isText: Bool) {
        #expect(EnvironmentPassphrase.isUTF8(SecureBytes(bytes)) == isText)
    }

    /// A test's in-memory environment is split the same way as the process's.
    @Test func anInMemoryContextHoldsItApart() throws {
        let context = CLIContext.inMemory(environment: ["FETCHCHANNEL_PASSPHRASE": "secret", "USER": "device"])
        #expect(context.environment == ["USER": "device"])
        #expect(try #require(context.environmentPassphrase).withUnsafeBytes { Array($0) } == Array("secret".utf8))
    }
}

extension CLISubprocessTests {
    @Suite struct EnvironmentPassphraseProcessTests {
        /// A command that runs for long (`serve`) does not show the passphrase in the environment
        /// the kernel keeps for it: the value was zeroed there as the process started.
        @Test func itIsGoneFromTheProcessEnvironment() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let marker = "marker-\(UUID().uuidString)"
            let environment = sandbox.environment(passphrase: marker, extra: ["TMPDIR": sandbox.root.path])
            let child = try CLIProcess(["serve", "--port", "0"], environment: environment)
            try child.start()
            defer { child.terminateIfRunning() }
            try await child.waitFor { $0.outputSoFar.contains("\n") }
            #expect(child.outputSoFar.hasPrefix("http://127.0.0.1:"), "\(child.errorSoFar)")
            let shown = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(child.process.processIdentifier)/environ"))
            #expect(shown.range(of: Data(marker.utf8)) == nil, "the passphrase is zeroed where the kernel shows it")
            #expect(shown.range(of: Data("TMPDIR=\(sandbox.root.path)".utf8)) != nil, "the rest is as it was")
            #expect(await child.stop().status == 0)
        }
    }
}
