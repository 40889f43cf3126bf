// Grover search over two qubits for the marked state |11>: one iteration finds it
OPENQASM 2.0;
include "qelib1.inc";
gate oracle a, b { cz a, b; }
gate diffuser a, b { h a; h b; x a; x b; cz a, b; x a; x b; h a; h b; }
qreg q[2];
creg c[2];
h q;
oracle q[0], q[1];
diffuser q[0], q[1];
measure q -> c;
