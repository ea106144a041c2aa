# Runs `llvm-ar -M` on an MRI script: cmake -DAR=... -DSCRIPT=... -P this
execute_process(COMMAND ${AR} -M INPUT_FILE ${SCRIPT} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "llvm-ar -M ${SCRIPT} failed: ${status}")
endif()
