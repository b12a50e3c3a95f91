// (registerReduceOps lives in ops_misc.cpp until the reduce family is written)
