// A plan's launch table: ranges `min_bytes: replicas x threads`, from the
// plan's min_bytes, increasing, within its range and the runtime's limits.
// RUN: collc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{launch must have at least one range}}
coll.plan @p : allgather ranks(1) chunks(1) launch <> {
}

// -----

// expected-error @+1 {{expected 'x'}}
coll.plan @p : allgather ranks(1) chunks(1) launch <0: 1, 64> {
}

// -----

// expected-error @+1 {{launch sizes must start at the plan's min_bytes and increase}}
coll.plan @p : allgather ranks(1) chunks(1) bytes[64, 128) launch <0: 1 x 64> {
}

// -----

// expected-error @+1 {{launch sizes must start at the plan's min_bytes and increase}}
coll.plan @p : allgather ranks(1) chunks(1) launch <0: 1 x 64, 0: 2 x 64> {
}

// -----

// expected-error @+1 {{launch size 128 is past the plan's max_bytes}}
coll.plan @p : allgather ranks(1) chunks(1) bytes[0, 128) launch <0: 1 x 64, 128: 2 x 64> {
}

// -----

// expected-error @+1 {{launch replicas must be in 1 .. 32}}
coll.plan @p : allgather ranks(1) chunks(1) launch <0: 33 x 64> {
}

// -----

// expected-error @+1 {{launch threads must be a multiple of 32 in 32 .. 512}}
coll.plan @p : allgather ranks(1) chunks(1) launch <0: 1 x 48> {
}
