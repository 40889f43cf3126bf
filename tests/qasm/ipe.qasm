// Iterative phase estimation of p(2 pi 0.3) on |1>: three rounds on one ancilla (reset
// between them), each corrected by the bits measured before it; the else branches are
// made up, to exercise them
OPENQASM 3.0;
include "stdgates.inc";
qubit[2] q;
bit[3] c;
x q[1];
// round 1: U^4, the least significant bit
h q[0];
cp(4 * 2 * pi * 0.3) q[0], q[1];
h q[0];
c[0] = measure q[0];
// round 2: U^2, corrected by c[0]
reset q[0];
h q[0];
cp(2 * 2 * pi * 0.3) q[0], q[1];
if (c[0]) {
  p(-pi / 2) q[0];
} else {
  rz(0.2) q[0];
}
h q[0];
c[1] = measure q[0];
// round 3: U, corrected by c[0] and c[1]
reset q[0];
h q[0];
cp(2 * pi * 0.3) q[0], q[1];
if (c == 3) {
  p(-3 * pi / 4) q[0];
} else {
  p(pi / 8) q[0];
}
if (!c[1]) {
  ry(0.1) q[0];
}
h q[0];
c[2] = measure q[0];
