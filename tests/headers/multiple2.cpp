#include "hetplan/hetplan.hpp"
#include "hetplan/io.hpp"

int hetplan_multiple1();
int main() { return hetplan_multiple1() == hetplan::fixtures::default_example().hw.pool.total() ? 0 : 1; }
