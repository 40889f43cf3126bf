// One round of the three-qubit bit-flip code: encode, coherent errors on two data qubits,
// the syndrome (d0 ^ d1, d1 ^ d2) into syn, the correction if (syn == k), the ancillas reset,
// and the syndrome measured again (always 0 after the correction), then the data
OPENQASM 2.0;
include "qelib1.inc";
qreg d[3];
qreg a[2];
creg syn[2];
creg again[2];
creg out[3];
ry(0.9) d[0];
cx d[0], d[1];
cx d[0], d[2];
rx(0.5) d[1];
rx(0.3) d[2];
cx d[0], a[0];
cx d[1], a[0];
cx d[1], a[1];
cx d[2], a[1];
measure a[0] -> syn[0];
measure a[1] -> syn[1];
if (syn == 1) x d[0];
if (syn == 3) x d[1];
if (syn == 2) x d[2];
reset a[0];
reset a[1];
cx d[0], a[0];
cx d[1], a[0];
cx d[1], a[1];
cx d[2], a[1];
measure a[0] -> again[0];
measure a[1] -> again[1];
measure d -> out;
