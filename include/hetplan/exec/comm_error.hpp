#pragma once
// The execution module's error: a peer failed, a collective was misused, a message did not fit.
#include "hetplan/core/error.hpp"

namespace hetplan::exec {

class comm_error : public error {
public:
    using error::error;
};

}  // namespace hetplan::exec
