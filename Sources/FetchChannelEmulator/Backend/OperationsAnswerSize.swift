/// How large one device's operations answer may grow: every fetch of the device must read in
/// the client, as plain JSON and as a JWE, or the device gets no operation at all until some
/// are redeemed or expire.
enum OperationsAnswerSize {
    /// The largest answer body the client reads (1 MiB): `HTTPAnswer.maximumBodyBytes` in
    /// FetchChannel, the bound of a JWE (`CompactJWE.maximumLength`) and of the JSON it decodes
    /// (`PendingOperationsDecoder.maximumBodyBytes`). This module does not import FetchChannel;
    /// a test checks that they agree.
    static let clientMaximumBytes = 1 << 20

    /// What a JWE adds to the base64url of its ciphertext, with room to spare: the emulator's
    /// protected header (no `kid`, `apu` or `apv`: about 200 characters for any `alg` and `enc`),
    /// the encrypted key (at most 96 characters), the IV (22), the tag (43) and four dots.
    static let joseOverheadBytes = 1024

    /// The largest plain JSON answer: its JWE is the base64url (4/3) of a ciphertext at most one
    /// 16-byte block longer (CBC padding), plus the overhead, so it fits ``clientMaximumBytes``
    /// whichever algorithms the backend is configured with.
    static let maximumJSONBytes = (clientMaximumBytes - joseOverheadBytes) / 4 * 3 - 16

    /// `{"operations":[` and `]}`, less the comma the first operation does not have: with the
    /// shares of its operations (``StoredOperation/answerShare``), the size of a non-empty answer.
    static let frameBytes = 16
}
