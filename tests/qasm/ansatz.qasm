// A parametrised two-layer ansatz with free inputs (OpenQASM 3)
OPENQASM 3.0;
include "stdgates.inc";
input float theta;
input float phi;
qubit[3] q;
ry(theta) q[0];
ry(2 * theta) q[1];
rz(phi / 2) q[2];
cx q[0], q[1];
cx q[1], q[2];
rx(theta + phi) q[0];
crz(-phi) q[2], q[0];
