# Included by CTest after the discovered e2e tests are defined (tests/CMakeLists.txt).
set_tests_properties(Soak.TwentySecondCpuGemmPassesWithSeriesAndVerdict PROPERTIES RUN_SERIAL TRUE)
