#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// write(2) under a name that the `write` methods of `OutputChannel` do not shadow.
#if canImport(Glibc)
    let systemWrite = Glibc.write
#elseif canImport(Darwin)
    let systemWrite = Darwin.write
#endif
