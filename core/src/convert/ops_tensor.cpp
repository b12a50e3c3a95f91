// (registerTensorOps lives in ops_misc.cpp until the tensor family is written)
