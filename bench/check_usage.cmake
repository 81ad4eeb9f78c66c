# ctest -L bench: a bench program's command line (bench/README.md): `--help` prints the usage on
# stdout and exits 0, an unknown option exits 2 with a message on stderr, and neither runs the
# benchmark. Called with -DPROGRAM=<path of the executable>.
execute_process(COMMAND "${PROGRAM}" --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 20)
string(TOLOWER "${out}" lower)
if(NOT rc EQUAL 0 OR NOT lower MATCHES "usage")
    message(FATAL_ERROR "${PROGRAM} --help: exit ${rc}, expected 0 and the usage on stdout\nstdout: ${out}\nstderr: ${err}")
endif()
execute_process(COMMAND "${PROGRAM}" --no-such-option RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 20)
if(NOT rc EQUAL 2 OR NOT err MATCHES "no-such-option")
    message(FATAL_ERROR "${PROGRAM} --no-such-option: exit ${rc}, expected 2 and a message naming the option on stderr\nstdout: ${out}\nstderr: ${err}")
endif()
