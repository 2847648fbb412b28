#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand { pub argv: Vec<String>, pub piped_from: Vec<String>, pub writes: Vec<String>, pub dynamic: bool }
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError { #[error("x")] Syntax { offset: usize, message: String } }
pub fn split(line: &str) -> Result<Vec<SimpleCommand>, ShellError> { Ok(vec![SimpleCommand{argv: line.split_whitespace().map(String::from).collect(), piped_from: vec![], writes: vec![], dynamic: false}]) }
