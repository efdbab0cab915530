// The MPI communicator under mpirun (CTest runs it on 8 ranks over loopback): the concept's laws,
// then plans of the Sailor, AutoHet, Zorse and uneven-FSDP (Cephalo) shapes trained for 3 steps, each rank checked
// against the single-process reference. Every rank runs the same doctest cases; a failure on any
// rank fails the run.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "communicator_laws.hpp"
#include "hetplan/exec/mpi_communicator.hpp"
#include "plan_shapes.hpp"

namespace hetplan::test {

TEST_CASE("exec_mpi_communicator: the communicator laws on the MPI world") {
    check_communicator_laws(exec::mpi_communicator::world());
}

TEST_CASE("exec_mpi_runner: Sailor, AutoHet, Zorse and uneven-FSDP plan shapes equal the single-process run") {
    using namespace exec_shapes;
    auto world = exec::mpi_communicator::world();
    REQUIRE(world.size() == 8);
    for (const plan& pl : {sailor_8(), autohet_8(), zorse_8(), fsdp_8()}) {
        reference<> ref(pl);
        (void)check_rank(pl, world, ref);
        world.barrier();
    }
}

TEST_CASE("exec_mpi_communicator: misuse is named, not a crash") {
    auto w = exec::mpi_communicator::world();
    CHECK_THROWS_WITH_AS(w.send(std::vector<float>{1}, w.size(), 0), doctest::Contains("send to rank"), exec::comm_error);
    exec::mpi_communicator outside;
    CHECK(outside.size() == 0);
    CHECK_THROWS_WITH_AS(outside.barrier(), doctest::Contains("outside the group"), exec::comm_error);
}

}  // namespace hetplan::test

int main(int argc, char** argv) {
    hetplan::exec::mpi_session mpi(&argc, &argv);
    doctest::Context ctx(argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) ctx.setOption("no-version", true), ctx.setOption("minimal", true);
    const int rc = ctx.run();
    int worst = 0;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}
