// User-specified paths for easier testing
pub const EXAMPLE_SECURITY_CONFIGURATION_FILES: &str = "example_security_configuration_files/";
