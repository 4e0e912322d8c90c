// A host-only translation unit (for the driver tests).
int host_main_helper() { return 0; }
