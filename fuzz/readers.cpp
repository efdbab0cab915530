// One JSON reader per binary (HETPLAN_FUZZ_READER: cluster, model, job, profiles): parse, read,
// check. Each reader must refuse with the file and field or return something its check accepts.
#include "fuzz.hpp"
#include "hetplan/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace hetplan;
    fuzz::refuse_cleanly([&] {
        const io::json j = io::parse_text(fuzz::text(data, size), "fuzz.json");
        const io::cursor root(j, "fuzz.json");
#if HETPLAN_FUZZ_READER == 1
        static_cast<void>(io::read_cluster(root));
#elif HETPLAN_FUZZ_READER == 2
        io::read_model(root).check("fuzz.json");
#elif HETPLAN_FUZZ_READER == 3
        io::read_job(root).check("fuzz.json");
#elif HETPLAN_FUZZ_READER == 4
        profile_table t;
        io::read_profiles(root, t);
        t.check("fuzz.json");
#else
#error "HETPLAN_FUZZ_READER: 1 cluster, 2 model, 3 job, 4 profiles"
#endif
    });
    return 0;
}
