extension Array where Element == UInt8 {
    /// `Array(unsafeUninitializedCapacity:initializingWith:)` for a count that may be zero.
    ///
    /// For capacity 0 the standard library's initializer hands out the one shared empty-array
    /// storage and still writes the count into it, so two threads that each make an empty array
    /// (an ECDH-ES JWE's empty encrypted key, decoded on two threads) write the same word; the
    /// thread sanitizer reports it as a data race. Here `body` runs on an empty buffer instead and
    /// the result is the ordinary empty array, which nothing writes to.
    init(
        uninitializedCount count: Int,
        initializingWith body: (inout UnsafeMutableBufferPointer<UInt8>, inout Int) throws -> Void
    ) rethrows {
        guard count > 0 else {
            var empty = UnsafeMutableBufferPointer<UInt8>(start: nil, count: 0)
            var initialized = 0
            try body(&empty, &initialized)
            self = []
            return
        }
        try self.init(unsafeUninitializedCapacity: count, initializingWith: body)
    }
}
