import DeviceSigning

/// The benchmarks' seeded generator: a script is the same on every run.
typealias BenchmarkRandom = SplitMix64
