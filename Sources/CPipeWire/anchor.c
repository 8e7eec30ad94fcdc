// CPipeWire is header-only (shim.h's static inline functions, compiled where Swift uses
// them); a C target needs one source file.
void sr_cpipewire_anchor(void);
void sr_cpipewire_anchor(void) {}
