# cmake -DIN=X.proto -DOUT=Y.proto -P lite_proto.cmake: a copy of a hipstack.monitor.v1 file for the
# protobuf lite runtime (hipstack-smi's messages: no descriptors to register at start-up).
file(READ "${IN}" text)
string(FIND "${text}" "\npackage hipstack.monitor.v1;\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${IN}: no 'package hipstack.monitor.v1;' line")
endif()
string(REPLACE "\npackage hipstack.monitor.v1;\n"
       "\npackage hipstack.monitor.v1;\noption optimize_for = LITE_RUNTIME;  // generated from ${IN}\n" text "${text}")
file(WRITE "${OUT}" "${text}")
