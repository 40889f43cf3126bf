// Teleportation of ry(0.7), rz(0.3) |0> from qubit 0 to qubit 2: a Bell pair, a Bell
// measurement into m0 and m1 (a register each), and the corrections they condition
OPENQASM 2.0;
include "qelib1.inc";
qreg q[3];
creg m0[1];
creg m1[1];
ry(0.7) q[0];
rz(0.3) q[0];
h q[1];
cx q[1], q[2];
cx q[0], q[1];
h q[0];
measure q[0] -> m0[0];
measure q[1] -> m1[0];
if (m1 == 1) x q[2];
if (m0 == 1) z q[2];
