pub fn format_source(_s: &str) {}
