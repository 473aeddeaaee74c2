#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// read(2) and write(2) under names that the `read` and `write` methods of `BoundedInput` and
// `OutputChannel` do not shadow.
#if canImport(Glibc)
    let systemRead = Glibc.read
    let systemWrite = Glibc.write
#elseif canImport(Darwin)
    let systemRead = Darwin.read
    let systemWrite = Darwin.write
#endif
