// A library that needs a symbol nothing provides, as one built against another libtorch does:
// loading it must fail with a clear error naming the symbol.
namespace other_libtorch {
void registerEverything(int version);
}

extern "C" void oxtest_bad_ops_entry() { other_libtorch::registerEverything(2); }
