import DeviceSigning
import Foundation

// A child process for the key store's crash-safety test: it saves, rotates and deletes keys in a
// loop until it is killed, and reports each completed step on stdout, one line per step, flushed:
//   saved <keyId>      the key's save() returned: it must load after any later kill
//   deleting <keyId>   delete() started: the key may or may not exist after a kill, but if its
//                      metadata is listed it must load
// Usage: keystore-crash-child STORE_DIRECTORY (passphrase from FETCHCHANNEL_PASSPHRASE).
// Test-only: it never runs outside the test suite and holds no key that matters.

/// One unbuffered write per line, so a line is either fully out or not at all when the kill lands.
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: keystore-crash-child STORE_DIRECTORY\n".utf8))
    exit(64)
}
guard let passphraseText = ProcessInfo.processInfo.environment["FETCHCHANNEL_PASSPHRASE"], !passphraseText.isEmpty
else {
    FileHandle.standardError.write(Data("Error: FETCHCHANNEL_PASSPHRASE is not set\n".utf8))
    exit(64)
}

do {
    let store = try KeyStore(directory: URL(fileURLWithPath: CommandLine.arguments[1]))
    let passphrase = SecureBytes(Array(passphraseText.utf8))
    // The cheapest cost the store accepts: the test is about file operations, not the KDF.
    let kdf = KeyDerivation.scrypt(n: KeyDerivation.minimumScryptN, r: 8, p: 1)
    var live = try store.list().map(\.keyId)
    var step = 0
    while true {
        step += 1
        let key = try P256.Signing.PrivateKey()
        let keyId = try store.save(
            key, metadata: KeyMetadata(publicKey: key.publicKey, deviceId: "crash-\(step)"),
            passphrase: passphrase, kdf: kdf)
        report("saved \(keyId)")
        live.append(keyId)
        // Rotation: every other step retires the oldest key once the new one is stored.
        if step % 2 == 0 || live.count > 6, let oldest = live.first {
            report("deleting \(oldest)")
            try store.delete(oldest)
            live.removeFirst()
        }
    }
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(1)
}
