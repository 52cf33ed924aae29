pub mod fio;
