// Full adder: a = 1, b = 1, carry-in = 1 -> sum 1, carry-out 1 (two registers)
OPENQASM 2.0;
include "qelib1.inc";
gate majority a, b, c { cx c, b; cx c, a; ccx a, b, c; }
gate unmaj a, b, c { ccx a, b, c; cx c, a; cx a, b; }
qreg cin[1];
qreg ab[2];
qreg cout[1];
creg result[2];
x cin[0];
x ab[0];
x ab[1];
majority cin[0], ab[1], ab[0];
cx ab[0], cout[0];
unmaj cin[0], ab[1], ab[0];
measure ab[1] -> result[0];
measure cout[0] -> result[1];
